// <home>/gateway.json: how every CLI command finds the running gateway of a home.
import { readFileSync, rmSync } from "node:fs";
import { z } from "zod";
import type { HomePaths } from "../home";
import { writePrivateFile } from "../private-file";

export const GatewayFileSchema = z.object({
  pid: z.number().int(),
  port: z.number().int(),
  url: z.string(),
  bridgePort: z.number().int(),
  startedAt: z.string(),
  workerdPid: z.number().int().nullable(),
  /** workerd's start time (/proc/<pid>/stat field 22): a reused pid never matches it. */
  workerdStartTime: z.string().nullable().default(null),
});
export type GatewayFile = z.infer<typeof GatewayFileSchema>;

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The recorded gateway, or null when there is none or the file is unreadable. */
export function readGatewayFile(paths: HomePaths): GatewayFile | null {
  try {
    const parsed = GatewayFileSchema.safeParse(JSON.parse(readFileSync(paths.gatewayFile, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function writeGatewayFile(paths: HomePaths, file: GatewayFile): void {
  writePrivateFile(paths.gatewayFile, `${JSON.stringify(file, null, 2)}\n`);
}

export function removeGatewayFile(paths: HomePaths): void {
  rmSync(paths.gatewayFile, { force: true });
}
