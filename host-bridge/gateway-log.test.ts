import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_LOG_KEPT, GATEWAY_LOG_MAX_BYTES, openGatewayLog, rotatedLogPath } from "./gateway-log";

describe("gateway.log on a full disk", () => {
  const mount = mkdtempSync(join(tmpdir(), "pc-log-full-"));
  beforeAll(() => execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mount]));
  afterAll(() => {
    execFileSync("umount", ["-l", mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  it("sends lines to stderr while full, never leaves half a line, and resumes once space returns", () => {
    let clock = 0;
    const errors: string[] = [];
    const path = join(mount, "gateway.log");
    const log = openGatewayLog(
      path,
      (text) => errors.push(text),
      () => clock,
    );
    log.write("first line");
    const filler = join(mount, "filler");
    const fd = openSync(filler, "w");
    try {
      for (;;) writeSync(fd, Buffer.alloc(1024));
    } catch {
      // full
    }
    closeSync(fd);
    // A line longer than the last page's slack cannot be written whole.
    log.write(`long ${"y".repeat(8192)}`);
    expect(log.isDegraded()).toBe(true);
    expect(errors.join("")).toContain("cannot be written (ENOSPC)");
    expect(readFileSync(path, "utf8")).toBe("first line\n");
    log.write("while full");
    expect(errors.at(-1)).toBe("while full\n");

    rmSync(filler);
    clock += 6_000;
    log.write("after");
    expect(log.isDegraded()).toBe(false);
    const text = readFileSync(path, "utf8");
    expect(text.startsWith("first line\n")).toBe(true);
    expect(text).toContain("gateway.log is writable again; 2 line(s) went to stderr meanwhile");
    expect(text.endsWith("after\n")).toBe(true);
    log.close();
  });
});

describe("gateway.log's bound", () => {
  const dir = mkdtempSync(join(tmpdir(), "pc-log-rotate-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("rotates by size into a bounded number of files, whole lines only, newest last, none lost but the oldest files", () => {
    const folder = mkdtempSync(join(dir, "small-"));
    const path = join(folder, "gateway.log");
    const log = openGatewayLog(path, () => {}, Date.now, { maxBytes: 1_000, kept: 3 });
    const lines = Array.from({ length: 200 }, (_, i) => `line ${String(i).padStart(4, "0")} ${"x".repeat(40)}`);
    for (const line of lines) log.write(line);
    log.close();
    expect(readdirSync(folder).sort()).toEqual(["gateway.log", "gateway.log.1", "gateway.log.2", "gateway.log.3"]);
    const files = [rotatedLogPath(path, 3), rotatedLogPath(path, 2), rotatedLogPath(path, 1), path];
    for (const file of files) expect(statSync(file).size).toBeLessThanOrEqual(1_000);
    // Oldest file first, each line whole: together they are the newest lines without a gap.
    const kept = files.flatMap((file) => readFileSync(file, "utf8").split("\n").slice(0, -1));
    expect(kept.length).toBeGreaterThan(60);
    expect(kept).toEqual(lines.slice(lines.length - kept.length));
    expect(readFileSync(path, "utf8").endsWith(`${lines.at(-1)}\n`)).toBe(true);
  });

  it("by default keeps gateway.log and five rotated files of at most 10 MiB each", () => {
    const folder = mkdtempSync(join(dir, "default-"));
    const path = join(folder, "gateway.log");
    const log = openGatewayLog(path, () => {});
    const line = "y".repeat(64 * 1024 - 1);
    for (let i = 0; i < 1_200; i += 1) log.write(line); // 75 MiB written
    log.close();
    expect(GATEWAY_LOG_MAX_BYTES).toBe(10 * 1024 * 1024);
    expect(GATEWAY_LOG_KEPT).toBe(5);
    const names = readdirSync(folder).sort();
    expect(names).toEqual(["gateway.log", ...[1, 2, 3, 4, 5].map((n) => `gateway.log.${n}`)]);
    const total = names.reduce((sum, name) => sum + statSync(join(folder, name)).size, 0);
    expect(total).toBeLessThanOrEqual(6 * GATEWAY_LOG_MAX_BYTES);
    for (const name of names) expect(statSync(join(folder, name)).size).toBeLessThanOrEqual(GATEWAY_LOG_MAX_BYTES);
  });

  it("a rotation that fails keeps every line in the current file, says so once, and rotates once it can", () => {
    const folder = mkdtempSync(join(dir, "stuck-"));
    const path = join(folder, "gateway.log");
    // A folder where gateway.log.1 must go: the rename onto it fails (EISDIR).
    mkdirSync(join(folder, "gateway.log.1", "inside"), { recursive: true });
    let clock = 0;
    const errors: string[] = [];
    const log = openGatewayLog(
      path,
      (text) => errors.push(text),
      () => clock,
      { maxBytes: 100, kept: 1 },
    );
    for (let i = 0; i < 10; i += 1) log.write(`stuck ${i} ${"z".repeat(30)}`);
    expect(readFileSync(path, "utf8").split("\n").slice(0, -1)).toHaveLength(10);
    expect(errors.filter((e) => e.includes("could not be rotated"))).toHaveLength(1);
    rmSync(join(folder, "gateway.log.1"), { recursive: true });
    clock += 6_000;
    log.write("after");
    log.close();
    expect(readFileSync(path, "utf8")).toBe("after\n");
    expect(readFileSync(rotatedLogPath(path, 1), "utf8").split("\n").slice(0, -1)).toHaveLength(10);
  });
});
