// Who wrote a journal of a restore (restore-journal.ts, merge-journal.ts): its pid AND start time
// and executable, as gateway.json names the gateway, so a pid the kernel gave to another process
// after the writer was killed does not read as a restore under way, which would leave the journal
// unsettled (and a start of the home refused) for as long as that unrelated process lives.
import { z } from "zod";
import { identityOf, isRecordedProcessAlive } from "../supervisor/process-identity";

/** The writer's fields of a journal; a journal from before them has only the pid and proves nothing. */
export const JournalWriterShape = {
  pid: z.number().int(),
  /** /proc/<pid>/stat field 22 of the writer. */
  pid_start_time: z.string().max(32).nullable().default(null),
  pid_exe: z.string().max(4096).nullable().default(null),
};

export interface JournalWriter {
  pid: number;
  pid_start_time: string | null;
  pid_exe: string | null;
}

/** This process, as a journal it writes names it. */
export function thisJournalWriter(): JournalWriter {
  const me = identityOf(process.pid);
  return { pid: process.pid, pid_start_time: me?.startTime ?? null, pid_exe: me?.exe ?? null };
}

/** Whether another process that wrote the journal still runs: the same pid, start time and executable. */
export function isOtherWriterAlive(writer: JournalWriter): boolean {
  if (writer.pid === process.pid) return false;
  return isRecordedProcessAlive({ pid: writer.pid, startTime: writer.pid_start_time, exe: writer.pid_exe });
}
