import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writePrivateFile } from "../private-file";
import { identityOf } from "../supervisor/process-identity";
import { mergeJournalPath, settleMerge, writeMergeJournal } from "./merge-journal";
import { addPendingPackages, readPendingPackages } from "./restore-packages";

describe("a merge's journal names its writer by pid and start time", () => {
  let home: string;
  /** A process other than this one that is alive for the whole test: the one that started it. */
  const other = identityOf(process.ppid)!;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "pc-merge-journal-"));
    mkdirSync(join(home, "apps", "placed-app"), { recursive: true });
    mkdirSync(join(home, "run"), { mode: 0o700 });
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const journalOf = (writer: { pid: number; pid_start_time?: string | null; pid_exe?: string | null }) =>
    writePrivateFile(
      mergeJournalPath(home),
      `${JSON.stringify({ version: 1, ...writer, placed: ["placed-app"], secrets: [] })}\n`,
    );
  const noRecord = () => false;

  it("records this process's start time and executable beside its pid", () => {
    writeMergeJournal(home, ["placed-app"]);
    const written = JSON.parse(readFileSync(mergeJournalPath(home), "utf8"));
    expect(written).toMatchObject({
      pid: process.pid,
      pid_start_time: identityOf(process.pid)!.startTime,
      pid_exe: identityOf(process.pid)!.exe,
    });
  });

  it("a journal whose writer still runs (same pid, same start time) is a merge under way, left alone", async () => {
    expect(other.startTime).not.toBeNull();
    journalOf({ pid: other.pid, pid_start_time: other.startTime, pid_exe: other.exe });
    expect(await settleMerge(home, noRecord)).toBe("in_progress");
    expect(existsSync(join(home, "apps", "placed-app"))).toBe(true);
  });

  it("a pid reused by another process after a killed merge does not read as a merge under way", async () => {
    // The pid is alive, but it started at another time than the merge that wrote the journal.
    journalOf({ pid: other.pid, pid_start_time: String(Number(other.startTime) + 1), pid_exe: other.exe });
    expect(await settleMerge(home, noRecord)).toEqual({ removed: ["placed-app"], secretsOwed: [] });
    expect(existsSync(join(home, "apps", "placed-app"))).toBe(false);
  });

  it("a live pid under another executable is not the merge either", async () => {
    journalOf({ pid: other.pid, pid_start_time: other.startTime, pid_exe: "/nonexistent/personalclaw" });
    expect(await settleMerge(home, noRecord)).toEqual({ removed: ["placed-app"], secretsOwed: [] });
  });

  it("an app it listed as owed packages but whose record never came is taken off the list, folder or not", async () => {
    mkdirSync(join(home, "apps", "recorded-app"), { recursive: true });
    addPendingPackages(home, ["placed-app", "never-placed", "recorded-app"]);
    writePrivateFile(
      mergeJournalPath(home),
      `${JSON.stringify({ version: 1, pid: 2 ** 22 + 1, placed: ["placed-app", "never-placed", "recorded-app"] })}\n`,
    );
    expect(await settleMerge(home, (name) => name === "recorded-app")).toEqual({
      removed: ["placed-app"],
      secretsOwed: [],
    });
    expect(readPendingPackages(home)).toEqual([{ name: "recorded-app" }]);
  });

  it("a journal that names only a pid proves no merge alive: it is settled, never waited on forever", async () => {
    journalOf({ pid: other.pid });
    expect(await settleMerge(home, (name) => name === "placed-app")).toEqual({ removed: [], secretsOwed: [] });
    expect(existsSync(join(home, "apps", "placed-app"))).toBe(true);
  });
});
