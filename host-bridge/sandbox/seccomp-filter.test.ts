import { describe, expect, it } from "vitest";
import { ARGUMENT_RULES, callNumbers, FILTER_ARCHES, REFUSED_CALLS, seccompProgram } from "./seccomp-filter";

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL = 0x80000000;

/** A classic-BPF interpreter for the instructions the filter uses, over one seccomp_data. */
function run(program: Buffer, data: { nr: number; arch: number; args?: bigint[] }): number {
  const seccompData = Buffer.alloc(64);
  seccompData.writeUInt32LE(data.nr >>> 0, 0);
  seccompData.writeUInt32LE(data.arch >>> 0, 4);
  (data.args ?? []).forEach((arg, i) => seccompData.writeBigUInt64LE(arg, 16 + 8 * i));
  let acc = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = seccompData.readUInt32LE(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else throw new Error(`unknown opcode ${code}`);
  }
  throw new Error("fell off the end of the program");
}

describe.each(Object.entries(FILTER_ARCHES))("the seccomp filter for %s", (arch, table) => {
  const program = seccompProgram(arch)!;
  const nr = callNumbers(arch)!;
  const call = (name: keyof typeof nr, args: bigint[] = []) =>
    run(program, { nr: nr[name]!, arch: table.auditArch, args });

  it("refuses every listed call with EPERM", () => {
    for (const name of Object.keys(REFUSED_CALLS) as (keyof typeof REFUSED_CALLS)[]) {
      if (nr[name] === undefined) continue;
      expect([name, call(name)]).toEqual([name, EPERM]);
    }
  });

  it("allows ordinary calls (read, write, openat, execve, exit_group)", () => {
    const ordinary = arch === "x64" ? [0, 1, 257, 59, 231] : [63, 64, 56, 221, 94];
    for (const n of ordinary) expect(run(program, { nr: n, arch: table.auditArch })).toBe(ALLOW);
  });

  it("refuses TIOCSTI and TIOCLINUX, also with high bits set, and allows other ioctls", () => {
    expect(call("ioctl", [0n, 0x5412n])).toBe(EPERM);
    expect(call("ioctl", [0n, 0x541cn])).toBe(EPERM);
    expect(call("ioctl", [0n, 0x1_0000_5412n])).toBe(EPERM);
    expect(call("ioctl", [0n, 0x5401n])).toBe(ALLOW); // TCGETS
  });

  it("refuses clone with any namespace flag, allows a thread or a fork", () => {
    for (const flag of [0x10000000n, 0x20000n, 0x20000000n, 0x40000000n, 0x4000000n, 0x8000000n, 0x2000000n])
      expect(call("clone", [flag | 0x11n])).toBe(EPERM);
    expect(call("clone", [0x3d0f00n])).toBe(ALLOW); // glibc's pthread_create
    expect(call("clone", [0x1200011n])).toBe(ALLOW); // fork
  });

  it("answers clone3 ENOSYS so the C library falls back to clone", () => {
    expect(call("clone3")).toBe(ENOSYS);
  });

  it("allows only the default personalities", () => {
    expect(call("personality", [0xffffffffn])).toBe(ALLOW);
    expect(call("personality", [0n])).toBe(ALLOW);
    expect(call("personality", [8n])).toBe(ALLOW);
    expect(call("personality", [0x0040000n])).toBe(EPERM); // ADDR_NO_RANDOMIZE
  });

  it("kills a call made through another ABI", () => {
    expect(run(program, { nr: 0, arch: 0x40000003 })).toBe(KILL); // i386
  });

  it("names a reason for every rule", () => {
    for (const reason of [...Object.values(REFUSED_CALLS), ...Object.values(ARGUMENT_RULES)])
      expect(reason.length).toBeGreaterThan(10);
  });
});

describe("the x86_64 filter", () => {
  it("kills x32 calls, whose numbers would otherwise slip past the list", () => {
    const program = seccompProgram("x64")!;
    expect(run(program, { nr: 0x40000000 + 250, arch: 0xc000003e })).toBe(KILL);
  });
});

describe("an unknown arch", () => {
  it("has no filter, so the probe can refuse the sandbox instead of running children unfiltered", () => {
    expect(seccompProgram("mips")).toBeNull();
  });
});
