// The owner's <home>/config.json: settings only the owner writes (never an app's manifest).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { SANDBOX_MEMORY_MB_RANGE, SANDBOX_PROCESSES_RANGE } from "../workers/contracts/sandbox-settings";
import type { SandboxSettings, SandboxSettingWrite } from "../workers/contracts/sandbox-settings";
import { writePrivateFile } from "./private-file";

export const OwnerConfigSchema = z.object({
  sandbox: z
    .object({
      /** "off" runs backends unsandboxed; doctor flags it. */
      mode: z.enum(["on", "off"]).default("on"),
      /** Extra environment names handed to app children (the floor list is withheld regardless). */
      env_passthrough: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).max(64).default([]),
      /** Per app child: processes (and threads) at once, and memory in MiB. */
      limits: z
        .object({
          processes: z.number().int().min(SANDBOX_PROCESSES_RANGE.min).max(SANDBOX_PROCESSES_RANGE.max).default(256),
          memory_mb: z.number().int().min(SANDBOX_MEMORY_MB_RANGE.min).max(SANDBOX_MEMORY_MB_RANGE.max).default(1024),
        })
        .strict()
        .default({ processes: 256, memory_mb: 1024 }),
      /**
       * Apps whose backends may reach any public host through their broker (never a local
       * address): the owner's explicit choice, written here only, logged at every start.
       */
      network_all: z.array(z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/)).max(256).default([]),
      /** Which mechanism bounds children; "auto" takes the first that works (see docs/design/sandbox.md). */
      bounds: z.enum(["auto", "cgroup", "systemd-scope", "rlimit"]).default("auto"),
    })
    .default({ mode: "on", env_passthrough: [], limits: { processes: 256, memory_mb: 1024 }, network_all: [], bounds: "auto" }),
});
export type OwnerConfig = z.infer<typeof OwnerConfigSchema>;

/** The owner's limits as the sandbox takes them. */
export function childLimits(config: OwnerConfig): { processes: number; memoryBytes: number } {
  return { processes: config.sandbox.limits.processes, memoryBytes: config.sandbox.limits.memory_mb * 1024 * 1024 };
}

/** Reads config.json; a missing file is the defaults, an invalid one is an error naming the field. */
export function readOwnerConfig(home: string): { ok: true; config: OwnerConfig } | { ok: false; reason: string } {
  let raw: unknown = {};
  try {
    raw = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return { ok: false, reason: `config.json cannot be read: ${(error as Error).message}` };
  }
  const parsed = OwnerConfigSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: `config.json: ${parsed.error.issues[0].path.join(".")} ${parsed.error.issues[0].message}` };
  return { ok: true, config: parsed.data };
}

/** The sandbox settings as the gateway's settings routes show them. */
export function sandboxSettings(config: OwnerConfig): SandboxSettings {
  return { mode: config.sandbox.mode, processes: config.sandbox.limits.processes, memory_mb: config.sandbox.limits.memory_mb };
}

/**
 * Writes one sandbox setting into config.json, keeping every other key the owner wrote: the
 * merged document is checked whole before it is written beside and renamed into place, so a
 * refused write leaves the file as it was.
 */
export function writeSandboxSetting(home: string, write: SandboxSettingWrite): { ok: true; sandbox: SandboxSettings } | { ok: false; reason: string } {
  const file = join(home, "config.json");
  let raw: Record<string, any> = {};
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return { ok: false, reason: `config.json cannot be read: ${(error as Error).message}` };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, reason: "config.json is not a JSON object" };
  const sandbox = raw.sandbox && typeof raw.sandbox === "object" && !Array.isArray(raw.sandbox) ? { ...raw.sandbox } : {};
  if (write.field === "mode") sandbox.mode = write.value;
  else sandbox.limits = { ...(sandbox.limits && typeof sandbox.limits === "object" ? sandbox.limits : {}), [write.field]: write.value };
  const next = { ...raw, sandbox };
  const parsed = OwnerConfigSchema.safeParse(next);
  if (!parsed.success) return { ok: false, reason: `config.json: ${parsed.error.issues[0].path.join(".")} ${parsed.error.issues[0].message}` };
  writePrivateFile(file, `${JSON.stringify(next, null, 2)}\n`);
  return { ok: true, sandbox: sandboxSettings(parsed.data) };
}
