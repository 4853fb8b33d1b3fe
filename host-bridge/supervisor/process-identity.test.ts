import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { identityOf, isRecordedProcessAlive, readProcStat } from "./process-identity";

describe("recorded process identity", () => {
  it("is alive only with the same start time and executable; a record without a start time proves nothing", async () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 100));
    try {
      const me = identityOf(child.pid!)!;
      expect(me.exe).toMatch(/sleep$/);
      expect(isRecordedProcessAlive(me)).toBe(true);
      expect(isRecordedProcessAlive({ ...me, startTime: "1" })).toBe(false);
      expect(isRecordedProcessAlive({ ...me, exe: process.execPath })).toBe(false);
      expect(isRecordedProcessAlive({ ...me, startTime: null })).toBe(false);
      expect(isRecordedProcessAlive({ ...me, exe: null })).toBe(true);
      expect(readProcStat(child.pid!)?.startTime).toBe(me.startTime);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
