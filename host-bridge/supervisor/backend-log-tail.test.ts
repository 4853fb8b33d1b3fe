import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOG_TAIL_BYTES, readBackendLog } from "./backend-log-tail";

const folders: string[] = [];
function logWith(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "pc-log-tail-"));
  folders.push(dir);
  const path = join(dir, "gateway.log");
  writeFileSync(path, text);
  return path;
}
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const T = "2026-12-01T10:00:00.000Z";

describe("readBackendLog", () => {
  it("answers only the named app's backend lines, oldest first, the last N", async () => {
    const path = logWith(
      [
        `${T} info app notes backend (pid 1): one`,
        `${T} info app notes-two backend (pid 2): not mine`,
        `${T} info bridge: app notes backend mentioned elsewhere`,
        `${T} warning app notes backend (pid 1): two`,
        `${T} error app notes backend exited with code 3`,
        "",
      ].join("\n"),
    );
    expect((await readBackendLog(path, { name: "notes", lines: 10 })).lines).toEqual([
      `${T} info app notes backend (pid 1): one`,
      `${T} warning app notes backend (pid 1): two`,
      `${T} error app notes backend exited with code 3`,
    ]);
    expect((await readBackendLog(path, { name: "notes", lines: 1 })).lines).toEqual([
      `${T} error app notes backend exited with code 3`,
    ]);
  });

  it("searches the masked line, so a search for a credential finds nothing", async () => {
    const path = logWith(`${T} info app notes backend (pid 1): key sk-live_4f9Qx7Lm2Rt8Vb3Nc6Zp1Kd5 loaded\n`);
    const all = await readBackendLog(path, { name: "notes", lines: 10 });
    expect(all.lines).toEqual([`${T} info app notes backend (pid 1): key *** loaded`]);
    expect((await readBackendLog(path, { name: "notes", lines: 10, q: "sk-live_4f9" })).lines).toEqual([]);
    expect((await readBackendLog(path, { name: "notes", lines: 10, q: "KEY" })).lines).toHaveLength(1);
  });

  it("reads only the log's tail and says so; a missing log is no lines", async () => {
    const filler = `${T} info app other backend (pid 9): ${"x".repeat(200)}\n`;
    const path = logWith(
      `${T} info app notes backend (pid 1): too old\n` +
        filler.repeat(Math.ceil(LOG_TAIL_BYTES / filler.length)) +
        `${T} info app notes backend (pid 1): recent\n`,
    );
    const answer = await readBackendLog(path, { name: "notes", lines: 10 });
    expect(answer).toEqual({ lines: [`${T} info app notes backend (pid 1): recent`], truncated: true });
    expect(await readBackendLog(join(folders[0]!, "absent.log"), { name: "notes", lines: 10 })).toEqual({
      lines: [],
      truncated: false,
    });
  });

  it("just after a rotation, reads the rest of its tail from the newest rotated file", async () => {
    const path = logWith(`${T} info app notes backend (pid 1): after the rotation\n`);
    writeFileSync(
      `${path}.1`,
      `${T} info app notes backend (pid 1): before the rotation\n${T} info app other backend (pid 2): not mine\n`,
    );
    writeFileSync(`${path}.2`, `${T} info app notes backend (pid 1): older than the tail reaches\n`);
    expect(await readBackendLog(path, { name: "notes", lines: 10 })).toEqual({
      lines: [
        `${T} info app notes backend (pid 1): before the rotation`,
        `${T} info app notes backend (pid 1): after the rotation`,
      ],
      truncated: false,
    });
  });
});
