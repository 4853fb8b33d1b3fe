// The owner's sandbox settings in config.json, read and written through the host bridge.
// Turning the sandbox off or raising a child's limits loosens security, so those writes go
// through the consent protocol (consent.ts) and nothing is written before "confirm": true;
// turning it on or lowering a limit writes at once. A change applies to backends started
// by the next `personalclaw start`.
import { emitEvent } from "../events";
import { z } from "zod";
import { SANDBOX_MEMORY_MB_RANGE, SANDBOX_PROCESSES_RANGE, SandboxSettingsSchema, type SandboxSettings, type SandboxSettingWrite } from "../contracts/sandbox-settings";
import { bridgeCall } from "../bridge-client";
import type { Env } from "../env";
import { consentGate, type SettingChange } from "./consent";
import { route } from "./define";

const SandboxWriteBody = z
  .object({
    mode: z.enum(["on", "off"]).optional(),
    processes: z.number().int().min(SANDBOX_PROCESSES_RANGE.min).max(SANDBOX_PROCESSES_RANGE.max).optional(),
    memory_mb: z.number().int().min(SANDBOX_MEMORY_MB_RANGE.min).max(SANDBOX_MEMORY_MB_RANGE.max).optional(),
    confirm: z.boolean().optional(),
  })
  .strict()
  .refine((b) => [b.mode, b.processes, b.memory_mb].filter((v) => v !== undefined).length === 1, "name exactly one of mode, processes, memory_mb");

function readSandbox(env: Env): Promise<SandboxSettings> {
  return bridgeCall(env, "POST", "/settings/sandbox/read", SandboxSettingsSchema, {});
}

/** The write a body asks for. */
function requestedWrite(body: z.infer<typeof SandboxWriteBody>): SandboxSettingWrite {
  if (body.mode !== undefined) return { field: "mode", value: body.mode };
  if (body.processes !== undefined) return { field: "processes", value: body.processes };
  return { field: "memory_mb", value: body.memory_mb! };
}

/** The loosening a write would make, or null when it only keeps or tightens. */
export function sandboxLoosening(current: SandboxSettings, write: SandboxSettingWrite): SettingChange | null {
  if (write.field === "mode") {
    if (current.mode === "off" || write.value === "on") return null;
    return { field: "sandbox.mode", consent: "sandbox_off", title: "Run app backends without the sandbox", from: "On", to: "Off" };
  }
  const from = current[write.field];
  if (write.value <= from) return null;
  const names = {
    processes: { field: "sandbox.limits.processes", consent: "sandbox_processes_raise", title: "Let each app child run more processes" },
    memory_mb: { field: "sandbox.limits.memory_mb", consent: "sandbox_memory_raise", title: "Let each app child use more memory (MiB)" },
  } as const;
  return { ...names[write.field], from: String(from), to: String(write.value), fromValue: from, toValue: write.value };
}

export const settingsRoutes = [
  route({
    method: "GET",
    path: "/api/settings/sandbox",
    family: "settings",
    authz: { kind: "owner" },
    internal: true,
    contract: "The sandbox settings in config.json: mode (on/off), processes and memory_mb per app child.",
    async handle({ env }) {
      return { sandbox: await readSandbox(env) };
    },
  }),
  route({
    method: "PATCH",
    path: "/api/settings/sandbox",
    family: "settings",
    authz: { kind: "owner" },
    internal: true,
    body: SandboxWriteBody,
    contract:
      "Writes one sandbox setting (mode, processes or memory_mb) to config.json for the next start. Turning the sandbox off or raising a limit needs \"confirm\": true: without it 400 confirmation_required with {field, consent, title, change, caution?} and nothing written (200 with X-PersonalClaw-Consent-Asked: 1 when X-PersonalClaw-Consent: ask).",
    async handle(req) {
      const current = await readSandbox(req.env);
      const write = requestedWrite(req.body);
      const asked = consentGate(req.c, sandboxLoosening(current, write), req.body.confirm);
      if (asked) return asked;
      const sandbox = await bridgeCall(req.env, "POST", "/settings/sandbox/write", SandboxSettingsSchema, write);
      await req.audit({
        kind: "settings.changed",
        outcome: "allowed",
        subject: `sandbox.${write.field === "mode" ? "mode" : `limits.${write.field}`}`,
        detail: { from: current[write.field], to: write.value, confirmed: req.body.confirm === true },
      });
      await emitEvent(req.env, "config.changed", { field: `sandbox.${write.field}` });
      return { sandbox, applies: "to backends started by the next `personalclaw start`" };
    },
  }),
];
