import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  recoverRestore,
  restoreFolders,
  restoreJournalPath,
  writeRestoreJournal,
  type RestoreJournal,
} from "./restore-journal";
import { identityOf } from "../supervisor/process-identity";

describe("a replace restore's journal, settled after a kill", () => {
  let parent: string;
  let home: string;
  let journal: RestoreJournal;

  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), "pc-restore-journal-"));
    home = join(parent, "home");
    mkdirSync(home);
    writeFileSync(join(home, "which"), "old");
    const { staged, previous } = restoreFolders(home, "0123456789ab");
    mkdirSync(staged);
    writeFileSync(join(staged, "which"), "new");
    // A pid that is not alive: the restore that wrote the journal was killed.
    journal = { version: 1, phase: "build", home, staged, previous, pid: 2 ** 22 + 1 };
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  const which = () => readFileSync(join(home, "which"), "utf8");

  it("killed while building: the home stays as it was and the staged copy goes", async () => {
    writeRestoreJournal(journal);
    expect(await recoverRestore(home)).toBe("rolled_back");
    expect(which()).toBe("old");
    expect(readdirSync(parent)).toEqual(["home"]);
  });

  it("killed at the swap, before either rename: the restore completes", async () => {
    writeRestoreJournal({ ...journal, phase: "swap" });
    expect(await recoverRestore(home)).toBe("completed");
    expect(which()).toBe("new");
    expect(readdirSync(parent)).toEqual(["home"]);
  });

  it("killed between the renames (no home at all): the restore completes", async () => {
    writeRestoreJournal({ ...journal, phase: "swap" });
    renameSync(home, journal.previous);
    expect(await recoverRestore(home)).toBe("completed");
    expect(which()).toBe("new");
    expect(readdirSync(parent)).toEqual(["home"]);
  });

  it("killed after both renames: the old home goes", async () => {
    writeRestoreJournal({ ...journal, phase: "finish" });
    renameSync(home, journal.previous);
    renameSync(journal.staged, home);
    expect(await recoverRestore(home)).toBe("completed");
    expect(which()).toBe("new");
    expect(readdirSync(parent)).toEqual(["home"]);
  });

  it("leaves a restore whose process still runs to it (the same pid, start time and executable)", async () => {
    const writer = identityOf(process.ppid)!;
    writeRestoreJournal({
      ...journal,
      phase: "swap",
      pid: writer.pid,
      pid_start_time: writer.startTime,
      pid_exe: writer.exe,
    });
    expect(await recoverRestore(home)).toBe("in_progress");
    expect(which()).toBe("old");
    expect(existsSync(restoreJournalPath(home))).toBe(true);
  });

  it("a pid another process took after the restore was killed is not a restore under way: the journal is settled", async () => {
    const other = identityOf(process.ppid)!;
    writeRestoreJournal({
      ...journal,
      phase: "swap",
      pid: other.pid,
      pid_start_time: String(Number(other.startTime) + 1),
      pid_exe: other.exe,
    });
    expect(await recoverRestore(home)).toBe("completed");
    expect(which()).toBe("new");
  });

  it("a journal naming only a live pid proves no restore alive: it is settled, never waited on forever", async () => {
    writeRestoreJournal({ ...journal, phase: "build", pid: process.ppid });
    expect(await recoverRestore(home)).toBe("rolled_back");
    expect(which()).toBe("old");
  });

  it("answers none and touches nothing without a journal", async () => {
    expect(await recoverRestore(home)).toBe("none");
    expect(which()).toBe("old");
    expect(existsSync(journal.staged)).toBe(true);
  });
});
