// The system calls no app child may make, as the classic BPF program bwrap loads (`--seccomp
// FD`) just before it runs the child. Threat: the namespaces and the mount plan hide the
// host's files and network, but a child still shares the host's kernel; these calls reach
// what the box cannot hide (the owner's session keyring, other processes' memory, kernel
// modules, new namespaces to mount in, the terminal's input queue) or widen the kernel's
// attack surface (bpf, perf, userfaultfd, io_uring). The list follows Flatpak's and Codex's
// Linux sandbox; docs/design/sandbox.md says why each call is here.
//
// The program is generated here rather than by libseccomp: Node has no maintained binding to
// it, and a program of a few dozen instructions over one fixed list is easier to read and to
// test (seccomp-filter.test.ts runs it through a BPF interpreter for every rule) than a native
// dependency would be to ship.

/** Where each filtered call is answered: refused, or unknown so the C library falls back. */
type Verdict = "refuse" | "unsupported";

interface ArchTable {
  /** AUDIT_ARCH_* from linux/audit.h: the arch seccomp_data reports for this ABI. */
  auditArch: number;
  /** x86_64 also accepts x32 calls (numbers with bit 30 set): refused whole. */
  x32Bit?: number;
  numbers: Readonly<Record<FilteredCall, number | undefined>>;
}

/** Calls refused whatever their arguments, each with the threat it closes. */
export const REFUSED_CALLS = {
  add_key: "the owner's session keyring (disk-encryption passphrases, Kerberos, cifs credentials)",
  keyctl: "the owner's session keyring",
  request_key: "the owner's session keyring",
  ptrace: "another process's memory and registers",
  process_vm_readv: "another process's memory",
  process_vm_writev: "another process's memory",
  perf_event_open: "kernel and CPU side channels; a large kernel attack surface",
  bpf: "loading programs into the kernel",
  userfaultfd: "a primitive of kernel exploits (pausing the kernel on a page fault)",
  init_module: "loading kernel modules",
  finit_module: "loading kernel modules",
  delete_module: "unloading kernel modules",
  kexec_load: "replacing the running kernel",
  kexec_file_load: "replacing the running kernel",
  mount: "changing the filesystem view the mount plan made",
  umount2: "uncovering what the mount plan covered",
  pivot_root: "changing the filesystem view",
  chroot: "changing the filesystem view",
  open_tree: "the new mount API",
  move_mount: "the new mount API",
  fsopen: "the new mount API",
  fsconfig: "the new mount API",
  fsmount: "the new mount API",
  fspick: "the new mount API",
  mount_setattr: "the new mount API",
  unshare: "new namespaces, in which a child holds capabilities",
  setns: "entering another namespace",
  syslog: "the kernel's log (addresses that defeat KASLR)",
  acct: "process accounting of the host",
  quotactl: "the host's disk quotas",
  uselib: "an obsolete loader call, a past exploit path",
  open_by_handle_at: "opening host files by handle, past every mount (the 'shocker' escape)",
  name_to_handle_at: "naming host files by handle",
  lookup_dcookie: "kernel profiling internals",
  io_uring_setup: "a large kernel attack surface that bypasses this filter's view of calls",
  io_uring_enter: "a large kernel attack surface",
  io_uring_register: "a large kernel attack surface",
} as const;

/** Calls allowed only with some arguments. */
export const ARGUMENT_RULES = {
  ioctl: "TIOCSTI and TIOCLINUX refused: pushing keystrokes into a terminal",
  clone: "namespace flags refused: a new user, mount, pid, net, uts, ipc or cgroup namespace",
  clone3: "answered ENOSYS: its flags sit in memory a filter cannot read, so the C library falls back to clone",
  personality: "only the default personalities: flags such as ADDR_NO_RANDOMIZE weaken ASLR",
} as const;

type FilteredCall = keyof typeof REFUSED_CALLS | keyof typeof ARGUMENT_RULES;

const X86_64: ArchTable = {
  auditArch: 0xc000003e,
  x32Bit: 0x40000000,
  numbers: {
    add_key: 248,
    keyctl: 250,
    request_key: 249,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    perf_event_open: 298,
    bpf: 321,
    userfaultfd: 323,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    kexec_load: 246,
    kexec_file_load: 320,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    chroot: 161,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    unshare: 272,
    setns: 308,
    syslog: 103,
    acct: 163,
    quotactl: 179,
    uselib: 134,
    open_by_handle_at: 304,
    name_to_handle_at: 303,
    lookup_dcookie: 212,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    ioctl: 16,
    clone: 56,
    clone3: 435,
    personality: 135,
  },
};

const AARCH64: ArchTable = {
  auditArch: 0xc00000b7,
  numbers: {
    add_key: 217,
    keyctl: 219,
    request_key: 218,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    perf_event_open: 241,
    bpf: 280,
    userfaultfd: 282,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    kexec_load: 104,
    kexec_file_load: 294,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    chroot: 51,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    unshare: 97,
    setns: 268,
    syslog: 116,
    acct: 89,
    quotactl: 60,
    uselib: undefined, // not in this ABI
    open_by_handle_at: 265,
    name_to_handle_at: 264,
    lookup_dcookie: 18,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    ioctl: 29,
    clone: 220,
    clone3: 435,
    personality: 92,
  },
};

/** The ABIs a filter exists for, by Node's process.arch. */
export const FILTER_ARCHES: Readonly<Record<string, ArchTable>> = { x64: X86_64, arm64: AARCH64 };

const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
const CLONE_NAMESPACE_FLAGS = 0x7e020000;
/** PER_LINUX, PER_LINUX32 and the query 0xffffffff: every other personality sets a flag. */
const ALLOWED_PERSONALITIES = [0x0, 0x8, 0xffffffff];
const EPERM = 1;
const ENOSYS = 38;

// seccomp_data: nr (u32) at 0, arch (u32) at 4, instruction pointer at 8, args[i] (u64) at 16 + 8i.
// The low half of an argument is at its offset on a little-endian machine (both ABIs here).
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const argLow = (i: number) => 16 + 8 * i;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;

// Classic BPF opcodes (linux/bpf_common.h).
const LD_W_ABS = 0x20;
const JMP_JEQ_K = 0x15;
const JMP_JGE_K = 0x35;
const JMP_JSET_K = 0x45;
const RET_K = 0x06;

type Label = "refuse" | "unsupported" | "allow" | "kill" | `check_${string}`;
type Step =
  | { op: "load"; offset: number }
  | { op: "jeq" | "jge" | "jset"; k: number; then: Label; else?: Label }
  | { op: "ret"; value: number }
  | { op: "label"; name: Label };

function returnFor(verdict: Verdict): number {
  return verdict === "refuse" ? retErrno(EPERM) : retErrno(ENOSYS);
}

/** The filter as labelled steps: readable, and resolved to jumps by assemble(). */
function filterSteps(arch: ArchTable): Step[] {
  const n = arch.numbers;
  const steps: Step[] = [
    // A call made through another ABI has other numbers: none is allowed (a 32-bit program fails at once).
    { op: "load", offset: ARCH_OFFSET },
    { op: "jeq", k: arch.auditArch, then: "check_nr", else: "kill" },
    { op: "label", name: "check_nr" },
    { op: "load", offset: NR_OFFSET },
  ];
  if (arch.x32Bit !== undefined) steps.push({ op: "jge", k: arch.x32Bit, then: "kill" });
  for (const call of Object.keys(REFUSED_CALLS) as (keyof typeof REFUSED_CALLS)[]) {
    const nr = n[call];
    if (nr !== undefined) steps.push({ op: "jeq", k: nr, then: "refuse" });
  }
  steps.push(
    { op: "jeq", k: n.clone3!, then: "unsupported" },
    { op: "jeq", k: n.ioctl!, then: "check_ioctl" },
    { op: "jeq", k: n.clone!, then: "check_clone" },
    { op: "jeq", k: n.personality!, then: "check_personality" },
    { op: "ret", value: RET_ALLOW },

    { op: "label", name: "check_ioctl" },
    { op: "load", offset: argLow(1) },
    { op: "jeq", k: TIOCSTI, then: "refuse" },
    { op: "jeq", k: TIOCLINUX, then: "refuse" },
    { op: "ret", value: RET_ALLOW },

    { op: "label", name: "check_clone" },
    { op: "load", offset: argLow(0) },
    { op: "jset", k: CLONE_NAMESPACE_FLAGS, then: "refuse" },
    { op: "ret", value: RET_ALLOW },

    { op: "label", name: "check_personality" },
    { op: "load", offset: argLow(0) },
    ...ALLOWED_PERSONALITIES.map((k): Step => ({ op: "jeq", k, then: "allow" })),
    { op: "ret", value: returnFor("refuse") },

    { op: "label", name: "allow" },
    { op: "ret", value: RET_ALLOW },
    { op: "label", name: "refuse" },
    { op: "ret", value: returnFor("refuse") },
    { op: "label", name: "unsupported" },
    { op: "ret", value: returnFor("unsupported") },
    { op: "label", name: "kill" },
    { op: "ret", value: RET_KILL_PROCESS },
  );
  return steps;
}

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** Resolves labels to the forward offsets classic BPF jumps take (0-255 instructions). */
function assemble(steps: readonly Step[]): Instruction[] {
  const at = new Map<Label, number>();
  let index = 0;
  for (const step of steps) {
    if (step.op === "label") at.set(step.name, index);
    else index++;
  }
  const out: Instruction[] = [];
  const offset = (label: Label | undefined, from: number) => {
    if (label === undefined) return 0;
    const target = at.get(label);
    if (target === undefined) throw new TypeError(`seccomp filter: no label ${label}`);
    const jump = target - from - 1;
    if (jump < 0 || jump > 255) throw new RangeError(`seccomp filter: jump to ${label} out of range (${jump})`);
    return jump;
  };
  for (const step of steps) {
    if (step.op === "label") continue;
    const here = out.length;
    if (step.op === "load") out.push({ code: LD_W_ABS, jt: 0, jf: 0, k: step.offset });
    else if (step.op === "ret") out.push({ code: RET_K, jt: 0, jf: 0, k: step.value });
    else {
      const code = step.op === "jeq" ? JMP_JEQ_K : step.op === "jge" ? JMP_JGE_K : JMP_JSET_K;
      out.push({ code, jt: offset(step.then, here), jf: offset(step.else, here), k: step.k >>> 0 });
    }
  }
  return out;
}

/**
 * The compiled filter for `arch` (Node's process.arch), as the bytes of a `struct sock_filter`
 * array bwrap reads from its --seccomp descriptor; null where no table exists (the sandbox
 * probe then reports the machine unsupported rather than run children unfiltered).
 */
export function seccompProgram(arch: string = process.arch): Buffer | null {
  const table = FILTER_ARCHES[arch];
  if (!table) return null;
  const program = assemble(filterSteps(table));
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    bytes.writeUInt16LE(ins.code, i * 8);
    bytes.writeUInt8(ins.jt, i * 8 + 2);
    bytes.writeUInt8(ins.jf, i * 8 + 3);
    bytes.writeUInt32LE(ins.k, i * 8 + 4);
  });
  return bytes;
}

/** The call numbers of `arch`, for tests that make the calls. */
export function callNumbers(arch: string = process.arch): Readonly<Record<FilteredCall, number | undefined>> | null {
  return FILTER_ARCHES[arch]?.numbers ?? null;
}
