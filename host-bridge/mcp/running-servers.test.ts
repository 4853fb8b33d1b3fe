// The hold an update puts on an app's MCP servers, with real files and real processes: a run
// recorded while held is refused and leaves nothing, a hold whose writer has ended holds
// nothing, and a run that died without removing its record is not waited for.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { holdAndStop, isHeld, registerRun, release } from "./running-servers";

/** A pid that was a process a moment ago and is none now. */
function endedPid(): number {
  const ran = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(ran.stdout);
}

describe("running MCP servers and the update's hold", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "pc-mcp-runs-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("records a run for its life, refuses one while the app is held, and lets it start again once released", async () => {
    const records = join(home, "run", "mcp", "notes");
    const record = registerRun(home, "notes", "search");
    expect(record).not.toBeNull();
    expect(readdirSync(records)).toEqual([`${process.pid}.json`]);
    record!.end();
    expect(readdirSync(records)).toEqual([]);

    // Held by this (live) process: a run may not start, and leaves no record behind.
    expect(await holdAndStop(home, "notes", 100)).toBe(0);
    expect(isHeld(home, "notes")).toBe(true);
    expect(isHeld(home, "other")).toBe(false);
    expect(registerRun(home, "notes", "search")).toBeNull();
    expect(readdirSync(records)).toEqual([]);
    release(home, "notes");
    expect(isHeld(home, "notes")).toBe(false);
    const again = registerRun(home, "notes", "search");
    expect(again).not.toBeNull();
    again!.end();
  });

  it("takes a hold left by a process that has ended as no hold, and a dead run's record as no run", async () => {
    const folder = join(home, "run", "mcp");
    mkdirSync(join(folder, "notes"), { recursive: true });
    const dead = endedPid();
    writeFileSync(join(folder, "notes.hold"), JSON.stringify({ pid: dead, start: "1" }));
    expect(isHeld(home, "notes")).toBe(false);
    writeFileSync(join(folder, "notes.hold"), "not json");
    expect(isHeld(home, "notes")).toBe(false);
    // A record of a run that died (or a pid since reused by another process) is dropped, never signalled.
    writeFileSync(join(folder, "notes", `${dead}.json`), JSON.stringify({ server: "s", pid: dead, start: "1" }));
    writeFileSync(
      join(folder, "notes", `${process.pid}.json`),
      JSON.stringify({ server: "s", pid: process.pid, start: "0" }),
    );
    // A record no run can be told from (a folder at its name) counts for nothing and is cleared.
    mkdirSync(join(folder, "notes", "4242.json", "inner"), { recursive: true });
    const started = Date.now();
    expect(await holdAndStop(home, "notes", 2_000)).toBe(0);
    expect(existsSync(join(folder, "notes", "4242.json"))).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(existsSync(join(folder, "notes", `${dead}.json`))).toBe(false);
    expect(existsSync(join(folder, "notes", `${process.pid}.json`))).toBe(false);
    release(home, "notes");
  });
});
