// The owner's sandbox settings as the gateway reads and writes them through the host bridge
// (config.json stays the bridge's file): the request and answer of both bridge operations.
import { z } from "zod";

export const SANDBOX_PROCESSES_RANGE = { min: 16, max: 65_536 } as const;
export const SANDBOX_MEMORY_MB_RANGE = { min: 64, max: 1_048_576 } as const;

export const SandboxSettingsSchema = z.object({
  mode: z.enum(["on", "off"]),
  processes: z.number().int(),
  memory_mb: z.number().int(),
});
export type SandboxSettings = z.infer<typeof SandboxSettingsSchema>;

/** One setting written: the bridge merges it into config.json, checks the whole file, then renames it into place. */
export const SandboxSettingWriteSchema = z.discriminatedUnion("field", [
  z.object({ field: z.literal("mode"), value: z.enum(["on", "off"]) }).strict(),
  z.object({ field: z.literal("processes"), value: z.number().int().min(SANDBOX_PROCESSES_RANGE.min).max(SANDBOX_PROCESSES_RANGE.max) }).strict(),
  z.object({ field: z.literal("memory_mb"), value: z.number().int().min(SANDBOX_MEMORY_MB_RANGE.min).max(SANDBOX_MEMORY_MB_RANGE.max) }).strict(),
]);
export type SandboxSettingWrite = z.infer<typeof SandboxSettingWriteSchema>;
