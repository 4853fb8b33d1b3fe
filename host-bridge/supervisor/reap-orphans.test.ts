// Real processes: an orphan we recorded, an unrelated orphan, a reused pid and a child whose
// parent is alive. Only the first may be killed.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSameProcess, readProcStat } from "./process-identity.js";
import { reapOrphans } from "./reap-orphans.js";
import { readRunRecords, writeRunRecord } from "./run-records.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../test/fixtures/backends");
let home: string;
const cleanup: number[] = [];

/** Runs `sh -c script` detached and returns its pid and what it printed (the script's own report). */
function shell(script: string, env: Record<string, string> = {}): Promise<{ shPid: number; out: string }> {
  return new Promise((resolve, reject) => {
    const sh = spawn("/bin/sh", ["-c", script], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
      env: { PATH: "/usr/bin:/bin", ...env },
    });
    let out = "";
    sh.stdout.on("data", (c: Buffer) => (out += c.toString()));
    sh.on("error", reject);
    sh.on("close", () => resolve({ shPid: sh.pid as number, out: out.trim() }));
  });
}

async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(25);
  }
  return check();
}

beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), "pc-reap-"));
});

afterAll(() => {
  for (const pid of cleanup) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  rmSync(home, { recursive: true, force: true });
});

describe("reapOrphans", () => {
  it("kills a recorded orphan but leaves an unrelated orphan, a reused pid and a child whose parent is alive", async () => {
    // 1. A recorded backend whose bridge (here: the shell) died, leaving it to init.
    const orphanRun = await shell(
      `"${process.execPath}" "${path.join(fixtures, "healthy.mjs")}" >/dev/null 2>&1 & echo $!`,
      { PORT: "0" },
    );
    const orphanPid = Number(orphanRun.out);
    cleanup.push(orphanPid);
    const orphan = readProcStat(orphanPid);
    expect(orphan).not.toBeNull();
    expect(await waitFor(() => readProcStat(orphanPid)?.ppid !== orphanRun.shPid)).toBe(true);
    writeRunRecord(home, {
      name: "orphan",
      pid: orphanPid,
      pgid: orphan!.pgid,
      startTime: orphan!.startTime,
      bridgePid: orphanRun.shPid,
      bridgeStartTime: "1",
      startedAt: new Date().toISOString(),
    });

    // 2. An unrelated PPID-1 process nobody recorded, and a record whose pid it now holds (pid reuse).
    const unrelatedRun = await shell("sleep 60 >/dev/null 2>&1 & echo $!");
    const unrelatedPid = Number(unrelatedRun.out);
    cleanup.push(unrelatedPid);
    const unrelated = readProcStat(unrelatedPid)!;
    writeRunRecord(home, {
      name: "reused",
      pid: unrelatedPid,
      pgid: unrelated.pgid,
      startTime: String(Number(unrelated.startTime) - 1000),
      bridgePid: 999_999,
      bridgeStartTime: "1",
      startedAt: new Date().toISOString(),
    });

    // 3. A backend whose parent (its bridge) is alive.
    const parent = spawn("/bin/sh", ["-c", `"${process.execPath}" "${path.join(fixtures, "healthy.mjs")}"; :`], {
      detached: true,
      stdio: "ignore",
      env: { PATH: "/usr/bin:/bin", PORT: "0" },
    });
    cleanup.push(parent.pid as number);
    let livePid = 0;
    expect(
      await waitFor(() => {
        const kids = readChildren(parent.pid as number);
        livePid = kids[0] ?? 0;
        return livePid > 0;
      }),
    ).toBe(true);
    cleanup.push(livePid);
    const live = readProcStat(livePid)!;
    writeRunRecord(home, {
      name: "sibling",
      pid: livePid,
      pgid: live.pgid,
      startTime: live.startTime,
      bridgePid: parent.pid as number,
      bridgeStartTime: readProcStat(parent.pid as number)!.startTime,
      startedAt: new Date().toISOString(),
    });

    const report = await reapOrphans(home, { graceMs: 2_000 });

    expect(report.killed).toEqual(["orphan"]);
    expect(await waitFor(() => !isSameProcess(orphanPid, orphan!.startTime))).toBe(true);
    expect(isSameProcess(unrelatedPid, unrelated.startTime)).toBe(true);
    expect(isSameProcess(livePid, live.startTime)).toBe(true);
    expect(report.cleared).toEqual(["reused"]);
    expect(report.left).toEqual([{ name: "sibling", why: "its bridge is alive" }]);
    expect(readRunRecords(home).records.map((r) => r.name)).toEqual(["sibling"]);
  });
});

/** Child pids of `pid`, from /proc/<pid>/task/<pid>/children. */
function readChildren(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
