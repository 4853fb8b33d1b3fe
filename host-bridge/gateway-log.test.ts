import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openGatewayLog } from "./gateway-log";

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
