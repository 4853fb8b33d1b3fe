// <home>/gateway.json: how every CLI command finds the running gateway of a home. The record
// names the CLI process and its workerd by pid, start time and executable, so a pid the
// kernel reused for an unrelated process is never taken for the gateway (never signalled).
import { rmSync } from "node:fs";
import { z } from "zod";
import type { HomePaths } from "../home";
import { writePrivateFile } from "../private-file";
import { identityOf, isRecordedProcessAlive } from "../supervisor/process-identity";
import { readPrivateRecord } from "../private-record";

export const GatewayFileSchema = z.object({
  pid: z.number().int(),
  /** The CLI process's start time (/proc/<pid>/stat field 22); null in a record that cannot prove it. */
  pidStartTime: z.string().nullable().default(null),
  /** The CLI process's executable (/proc/<pid>/exe). */
  pidExe: z.string().nullable().default(null),
  port: z.number().int(),
  url: z.string(),
  bridgePort: z.number().int(),
  startedAt: z.string(),
  workerdPid: z.number().int().nullable(),
  /** workerd's start time (/proc/<pid>/stat field 22): a reused pid never matches it. */
  workerdStartTime: z.string().nullable().default(null),
  /** workerd's executable, the real path of the binary start ran. */
  workerdExe: z.string().nullable().default(null),
});
export type GatewayFile = z.infer<typeof GatewayFileSchema>;

/** True when the record's CLI process is alive and is the very process that wrote it. */
export function isRecordedGatewayAlive(file: GatewayFile): boolean {
  return isRecordedProcessAlive({ pid: file.pid, startTime: file.pidStartTime, exe: file.pidExe });
}

/** True when the record's workerd is alive and is the very process start ran. */
export function isRecordedWorkerdAlive(file: GatewayFile): boolean {
  if (file.workerdPid === null) return false;
  return isRecordedProcessAlive({ pid: file.workerdPid, startTime: file.workerdStartTime, exe: file.workerdExe });
}

/** The identity fields of this process, for the record start writes. */
export function thisProcessIdentity(): { pid: number; pidStartTime: string | null; pidExe: string | null } {
  const me = identityOf(process.pid);
  return { pid: process.pid, pidStartTime: me?.startTime ?? null, pidExe: me?.exe ?? null };
}

/** The recorded gateway, or null when there is none or the file is unreadable. */
export function readGatewayFile(paths: HomePaths): GatewayFile | null {
  return readPrivateRecord(paths.gatewayFile, GatewayFileSchema);
}

/** The recorded gateway when its CLI process is provably alive; null for none or a stale record. */
export function readLiveGateway(paths: HomePaths): GatewayFile | null {
  const file = readGatewayFile(paths);
  return file && isRecordedGatewayAlive(file) ? file : null;
}

export function writeGatewayFile(paths: HomePaths, file: GatewayFile): void {
  writePrivateFile(paths.gatewayFile, `${JSON.stringify(file, null, 2)}\n`);
}

export function removeGatewayFile(paths: HomePaths): void {
  rmSync(paths.gatewayFile, { force: true });
}
