// The owner's settings in config.json (CFG-01..06, GRANT-01), read and written through the host
// bridge: every editable path is one entry of kernel/contracts/owner-settings.ts and nothing
// else has a write surface. A write that loosens security asks through the consent protocol
// (consent.ts) and then needs the owner present (AUTH-26); nothing is written before both. An
// app reaches only the paths its manifest declared in permissions.config, and never a security
// setting. Every change is a security-log row with from → to. A change applies at the next
// `personalclaw start`. PATCH /api/settings/sandbox is a thin alias kept for older clients: it
// names one sandbox path and takes the same rule through the same function.
import { emitEvent } from "../../durable/event-hub/emit";
import { z } from "zod";
import { ErrorEnvelopeSchema, GatewayError, type ErrorCode } from "../../kernel/contracts/errors";
import {
  describeSetting,
  describeSettingValue,
  isWholeDocument,
  OWNER_SETTINGS,
  settingAt,
  settingNameRefusal,
  settingValueRefusal,
  SettingDescriptionSchema,
  SettingChangedAnswerSchema,
  SettingsAnswerSchema,
  type SettingSpec,
  type SettingValue,
  type SettingWrite,
} from "../../kernel/contracts/owner-settings";
import { revisionNamedBy, revisionOf } from "../../kernel/contracts/revision";
import { parseTtl } from "../../kernel/contracts/session";
import { grantsOf } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import type { Env } from "../../durable/env";
import { assertOwnerPresence } from "../guards/owner-presence";
import { consentGate, type SettingChange } from "./consent";
import { route, type RouteRequest } from "../route-row";

const APPLIES = "at the next `personalclaw start`";
const settingValue = z.union([z.string().max(256), z.number(), z.array(z.string().max(128)).max(256)]);
const SettingsAnswer = z.strictObject({
  config: z.record(z.string(), z.unknown()),
  revisions: z.record(z.string(), z.string()),
  schema: z.array(SettingDescriptionSchema),
  applies: z.literal(APPLIES),
});
// With X-PersonalClaw-Consent: ask, a loosening write answers its question as a 200 (consent.ts).
const SettingWrittenAnswer = z.union([
  z.strictObject({
    path: z.string(),
    value: z.union([z.string(), z.number(), z.array(z.string())]),
    applies: z.literal(APPLIES),
    revision: z.string().optional(),
  }),
  ErrorEnvelopeSchema,
]);
const SandboxView = z.strictObject({
  mode: z.enum(["on", "off"]),
  processes: z.number().int(),
  memory_mb: z.number().int(),
});
/** What writing one setting can refuse (writeSetting). */
const SETTING_WRITE_REFUSALS: ErrorCode[] = [
  "config_path_not_editable",
  "config_field_not_declared",
  "setting_value_invalid",
  "revision_required",
  "stale_write",
  "confirmation_required",
  "fresh_sign_in_required",
  "config_file_invalid",
  "bridge_unavailable",
];

const ConfigPatchBody = z
  .object({
    path: z.string().min(1).max(128),
    value: settingValue.optional(),
    add: z.string().max(128).optional(),
    remove: z.string().max(128).optional(),
    confirm: z.boolean().optional(),
  })
  .strict()
  .refine(
    (b) => [b.value, b.add, b.remove].filter((v) => v !== undefined).length === 1,
    "send exactly one of value, add, remove",
  );
type ConfigPatch = z.infer<typeof ConfigPatchBody>;

/** What one write asks for, once its path is known to be editable. */
type RequestedWrite = { op: "set"; value: SettingValue } | { op: "add" | "remove"; name: string };

function readSettings(env: Env) {
  return bridgeCall(env, "POST /config/read", {});
}

function refuseValue(spec: SettingSpec, expected: string): never {
  throw new GatewayError("setting_value_invalid", {
    vars: { path: spec.path, expected },
    detail: { path: spec.path, expected },
  });
}

/** A lifetime may be written as seconds or as a duration like 30d (AUTH-19: never above 90 days). */
function normalisedValue(spec: SettingSpec, value: SettingValue): SettingValue {
  if (spec.unit === "seconds" && typeof value === "string") {
    const parsed = parseTtl(value);
    if (parsed.ok) return Math.round(parsed.ms / 1000);
    if (parsed.code === "token_ttl_too_long") refuseValue(spec, settingValueRefusal(spec, spec.max! + 1)!);
    refuseValue(spec, `a whole number of seconds or a duration like 30d`);
  }
  return value;
}

/** The loosening a write would make, as the consent protocol asks it, or null when it keeps or tightens. */
export function settingLoosening(spec: SettingSpec, from: SettingValue, to: SettingValue): SettingChange | null {
  if (!spec.loosens(from, to)) return null;
  const change: SettingChange = {
    field: spec.path,
    consent: spec.consent,
    title: spec.title,
    from: describeSettingValue(spec, from),
    to: describeSettingValue(spec, to),
  };
  if (spec.type === "integer") {
    change.fromValue = from as number;
    change.toValue = to as number;
  }
  return change;
}

function appGrant(req: RouteRequest<unknown, unknown>) {
  return req.principal.kind === "app" ? grantsOf(req.env, req.principal.app) : Promise.resolve(null);
}

function notDeclared(app: string, path: string, access: "reading" | "writing"): GatewayError {
  return new GatewayError("config_field_not_declared", {
    vars: { app, path: path.slice(0, 128), access },
    detail: { path: path.slice(0, 128), access },
  });
}

/**
 * Writes one setting: path check, the app's grant, the value's bounds, the revision of a whole
 * document, then consent and presence for a loosening change, then the bridge's write (which
 * checks the revision it was judged on once more) and the row.
 */
export async function writeSetting(
  req: RouteRequest<unknown, unknown>,
  patch: ConfigPatch,
): Promise<Response | Record<string, unknown>> {
  const spec = settingAt(patch.path);
  if (!spec) {
    // An app reaching for a setting that is not one (the gateway's own keys, say) is kept.
    if (req.principal.kind === "app")
      await req.audit({
        kind: "config_path_not_editable",
        outcome: "refused",
        subject: patch.path.slice(0, 128),
        group: `config:${req.principal.app}:not-editable`,
      });
    throw new GatewayError("config_path_not_editable", {
      vars: { path: patch.path.slice(0, 128) },
      detail: { path: patch.path.slice(0, 128) },
    });
  }
  if (req.principal.kind === "app") {
    const grants = await appGrant(req);
    if (!grants?.config.write.includes(spec.path)) {
      await req.audit({
        kind: "config_field_not_declared",
        outcome: "refused",
        subject: spec.path,
        group: `config:${req.principal.app}:${spec.path}`,
      });
      throw notDeclared(req.principal.app, spec.path, "writing");
    }
  }
  let write: RequestedWrite;
  if (patch.value !== undefined) {
    const value = normalisedValue(spec, patch.value);
    const refusal = settingValueRefusal(spec, value);
    if (refusal) refuseValue(spec, refusal);
    write = { op: "set", value };
  } else {
    if (!isWholeDocument(spec)) refuseValue(spec, "a single value: write it with {path, value}");
    const name = (patch.add ?? patch.remove)!;
    const refusal = settingNameRefusal(spec, name);
    if (refusal) refuseValue(spec, refusal);
    write = { op: patch.add !== undefined ? "add" : "remove", name };
  }
  // A whole list is replaced only over the revision it was read at (CONV-10); add/remove need none (CONV-12).
  const ifMatch = req.c.req.header("if-match");
  if (write.op === "set" && isWholeDocument(spec) && ifMatch === undefined) throw new GatewayError("revision_required");
  const current = (await readSettings(req.env)).values[spec.path];
  const currentRevision = await revisionOf(current);
  if (ifMatch !== undefined && write.op === "set") {
    const basedOn = revisionNamedBy(ifMatch);
    if (basedOn === undefined) throw new GatewayError("revision_required");
    if (basedOn !== currentRevision) throw new GatewayError("stale_write");
  }
  const next: SettingValue =
    write.op === "set"
      ? write.value
      : write.op === "add"
        ? (current as string[]).includes(write.name)
          ? current
          : [...(current as string[]), write.name]
        : (current as string[]).filter((n) => n !== write.name);
  const confirm = patch.confirm;
  const loosening = settingLoosening(spec, current, next);
  const asked = consentGate(req.c, loosening, confirm);
  if (asked) return asked;
  if (loosening) assertOwnerPresence(req);
  const bridgeWrite: SettingWrite =
    write.op === "set"
      ? { op: "set", path: spec.path, value: write.value, expect: currentRevision }
      : { op: write.op, path: spec.path, name: write.name };
  const written = await bridgeCall(req.env, "POST /config/write", bridgeWrite);
  await req.audit({
    kind: "settings.changed",
    outcome: "allowed",
    subject: spec.path,
    detail: { from: written.from, to: written.to, loosened: loosening !== null, confirmed: confirm === true },
  });
  await emitEvent(req.env, "config.changed", { field: spec.path });
  const answer: z.input<typeof SettingChangedAnswerSchema> = { path: spec.path, value: written.to, applies: APPLIES };
  if (isWholeDocument(spec)) answer.revision = await revisionOf(written.to);
  return answer;
}

/** Nests dotted paths into one document: {"sandbox.mode": "on"} → {sandbox: {mode: "on"}}. */
function nested(values: Record<string, SettingValue>): Record<string, unknown> {
  type Node = { [key: string]: Node | SettingValue };
  const out: Node = {};
  for (const [path, value] of Object.entries(values)) {
    const keys = path.split(".");
    let node = out;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Node;
    node[keys[keys.length - 1]] = value;
  }
  return out;
}

const SandboxAliasBody = z
  .object({
    mode: z.enum(["on", "off"]).optional(),
    processes: z.number().int().optional(),
    memory_mb: z.number().int().optional(),
    confirm: z.boolean().optional(),
  })
  .strict()
  .refine(
    (b) => [b.mode, b.processes, b.memory_mb].filter((v) => v !== undefined).length === 1,
    "name exactly one of mode, processes, memory_mb",
  );

async function sandboxView(env: Env) {
  const { values } = await readSettings(env);
  return {
    mode: values["sandbox.mode"],
    processes: values["sandbox.limits.processes"],
    memory_mb: values["sandbox.limits.memory_mb"],
  };
}

export const settingsRoutes = [
  route({
    method: "GET",
    path: "/api/config/personalclaw",
    family: "settings",
    authz: {
      kind: "app-may",
      why: "an app reads the settings its manifest declared in permissions.config (and /api/config in permissions.api)",
    },
    internal: true,
    contract:
      "The owner's editable settings: `config` (nested), `revisions` (dotted path → revision of each whole-document field, for If-Match on {path, value}) and `schema` (every editable path's type, default, bounds, meaning and whether it is a security setting). An app token sees only the paths it declared in permissions.config.",
    answer: { schema: SettingsAnswer },
    refuses: ["config_file_invalid", "bridge_unavailable"],
    async handle(req) {
      const { values } = await readSettings(req.env);
      // An app sees only what it declared; one the registry no longer knows sees nothing.
      const readable: string[] | null =
        req.principal.kind === "app" ? ((await appGrant(req))?.config.read ?? []) : null;
      const visible = OWNER_SETTINGS.filter((spec) => readable === null || readable.includes(spec.path));
      const shown: Record<string, SettingValue> = {};
      const revisions: Record<string, string> = {};
      for (const spec of visible) {
        shown[spec.path] = values[spec.path];
        if (isWholeDocument(spec)) revisions[spec.path] = await revisionOf(values[spec.path]);
      }
      return {
        config: nested(shown),
        revisions,
        schema: visible.map(describeSetting),
        applies: APPLIES,
      } satisfies z.input<typeof SettingsAnswerSchema>;
    },
  }),
  route({
    method: "PATCH",
    path: "/api/config/personalclaw",
    family: "settings",
    authz: {
      kind: "app-may",
      why: "an app writes the settings its manifest declared for writing in permissions.config",
    },
    internal: true,
    body: ConfigPatchBody,
    contract:
      'Writes one editable setting to config.json for the next start: {path, value} (a whole list over If-Match with its revision: 428 revision_required without, 409 stale_write if it changed, nothing written), or {path, add} / {path, remove} for one name of a list. 400 config_path_not_editable for a path not in the schema; 400 setting_value_invalid outside its bounds (auth.session_ttl at most 90 days). A loosening change needs "confirm": true (400 confirmation_required with {field, consent, title, change, caution?}, or 200 with X-PersonalClaw-Consent-Asked: 1 when X-PersonalClaw-Consent: ask) and owner presence (401 fresh_sign_in_required). An app writes only what it declared for writing (403 config_field_not_declared). Every change is a settings.changed row with from and to.',
    answer: { schema: SettingWrittenAnswer },
    refuses: SETTING_WRITE_REFUSALS,
    async handle(req) {
      return writeSetting(req as RouteRequest<unknown, unknown>, req.body);
    },
  }),
  route({
    method: "GET",
    path: "/api/settings/sandbox",
    family: "settings",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "The sandbox settings in config.json: mode (on/off), processes and memory_mb per app child (the sandbox paths of GET /api/config/personalclaw).",
    answer: { schema: z.strictObject({ sandbox: SandboxView }) },
    refuses: ["config_file_invalid", "bridge_unavailable"],
    async handle({ env }) {
      return { sandbox: await sandboxView(env) };
    },
  }),
  route({
    method: "PATCH",
    path: "/api/settings/sandbox",
    family: "settings",
    authz: { kind: "owner" },
    internal: true,
    body: SandboxAliasBody,
    contract:
      'An alias of PATCH /api/config/personalclaw for one of sandbox.mode, sandbox.limits.processes, sandbox.limits.memory_mb, under the same rule: turning the sandbox off or raising a limit needs "confirm": true (400 confirmation_required, or 200 with X-PersonalClaw-Consent-Asked: 1 when X-PersonalClaw-Consent: ask) and owner presence; nothing written before.',
    answer: {
      schema: z.union([z.strictObject({ sandbox: SandboxView, applies: z.literal(APPLIES) }), ErrorEnvelopeSchema]),
    },
    refuses: SETTING_WRITE_REFUSALS.filter((code) => code !== "config_field_not_declared"),
    async handle(req) {
      const { mode, processes, memory_mb, confirm } = req.body;
      const patch =
        mode !== undefined
          ? { path: "sandbox.mode", value: mode }
          : processes !== undefined
            ? { path: "sandbox.limits.processes", value: processes }
            : { path: "sandbox.limits.memory_mb", value: memory_mb! };
      const written = await writeSetting(req as RouteRequest<unknown, unknown>, {
        ...patch,
        ...(confirm !== undefined ? { confirm } : {}),
      });
      if (written instanceof Response) return written;
      return { sandbox: await sandboxView(req.env), applies: APPLIES };
    },
  }),
];
