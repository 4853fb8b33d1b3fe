// The owner's <home>/config.json: settings only the owner writes (never an app's manifest).
// Its editable paths, their bounds and defaults come from the one list in
// kernel/contracts/owner-settings.ts; this file is the schema of the file as a whole and the
// only code that reads or writes it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import {
  DEFAULT_MCP_REGISTRIES,
  DEFAULT_NPM_REGISTRY,
  DEFAULT_PYPI_INDEX,
  DEFAULT_SESSION_TTL_S,
  OWNER_SETTINGS,
  packageSourceUrlRefusal,
  PROXY_TIMEOUT_RANGE_S,
  SANDBOX_MEMORY_MB_RANGE,
  SANDBOX_STORAGE_MB_RANGE,
  DEFAULT_SANDBOX_STORAGE_MB,
  SANDBOX_PROCESSES_RANGE,
  SEL_RETENTION_RANGE_DAYS,
  SESSION_TTL_RANGE_S,
  settingAt,
  settingNameRefusal,
  settingValueRefusal,
  type SettingsDocument,
  type SettingValue,
  type SettingWrite,
} from "../kernel/contracts/owner-settings";
import { revisionOf } from "../kernel/contracts/revision";
import { GatewayError } from "../kernel/contracts/errors";
import { writePrivateFile } from "./private-file";
import { APP_NAME_PATTERN } from "../kernel/rules/app-name";
import type { Limits } from "./sandbox/bounds";

import {
  MCP_ASK_TIMEOUT_RANGE_S,
  MCP_CALL_TIMEOUT_RANGE_S,
  MCP_MAX_ANSWER_RANGE_BYTES,
} from "../kernel/contracts/owner-settings-mcp";
import {
  GATEWAY_LOG_FILES_RANGE,
  GATEWAY_LOG_FORMATS,
  GATEWAY_LOG_SIZE_RANGE_MB,
} from "../kernel/contracts/owner-settings-logs";

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const appName = z.string().regex(APP_NAME_PATTERN);
/** A whole number within a setting's range, its default when absent. */
const rangeOf = (range: { min: number; max: number; default: number }) =>
  z.number().int().min(range.min).max(range.max).default(range.default);

export const OwnerConfigSchema = z.object({
  auth: z
    .object({
      /**
       * Seconds a browser sign-in lasts. A file that says more than 90 days is applied as 90 days
       * and doctor says so (AUTH-19); the API never writes more.
       */
      session_ttl: z.number().int().min(SESSION_TTL_RANGE_S.min).default(DEFAULT_SESSION_TTL_S),
    })
    .default({ session_ttl: DEFAULT_SESSION_TTL_S }),
  gateway: z
    .object({
      /** The address workerd listens on when PERSONALCLAW_BIND_HOST is not set. */
      bind_host: z
        .string()
        .regex(/^[A-Za-z0-9.:-]{1,253}$/)
        .default("127.0.0.1"),
    })
    .default({ bind_host: "127.0.0.1" }),
  sandbox: z
    .object({
      /** "off" runs backends unsandboxed; doctor flags it. */
      mode: z.enum(["on", "off"]).default("on"),
      /** Extra environment names handed to app children (the floor list is withheld regardless). */
      env_passthrough: z.array(envName).max(64).default([]),
      /** Per app child: processes (and threads) at once, and memory in MiB. */
      limits: z
        .object({
          processes: z.number().int().min(SANDBOX_PROCESSES_RANGE.min).max(SANDBOX_PROCESSES_RANGE.max).default(256),
          memory_mb: z.number().int().min(SANDBOX_MEMORY_MB_RANGE.min).max(SANDBOX_MEMORY_MB_RANGE.max).default(1024),
          /** data/ and the private /tmp together, in MiB (docs/design/sandbox.md, "Storage limit and reserve"). */
          storage_mb: z
            .number()
            .int()
            .min(SANDBOX_STORAGE_MB_RANGE.min)
            .max(SANDBOX_STORAGE_MB_RANGE.max)
            .default(DEFAULT_SANDBOX_STORAGE_MB),
        })
        .strict()
        .default({ processes: 256, memory_mb: 1024, storage_mb: DEFAULT_SANDBOX_STORAGE_MB }),
      /**
       * Apps whose backends may reach any public host through their broker (never a local
       * address): the owner's explicit choice, written here only, logged at every start.
       */
      network_all: z.array(appName).max(256).default([]),
      /** Which mechanism bounds children; "auto" takes the first that works (see docs/design/sandbox.md). */
      bounds: z.enum(["auto", "cgroup", "systemd-scope", "rlimit"]).default("auto"),
    })
    .default({
      mode: "on",
      env_passthrough: [],
      limits: { processes: 256, memory_mb: 1024, storage_mb: DEFAULT_SANDBOX_STORAGE_MB },
      network_all: [],
      bounds: "auto",
    }),
  logs: z
    .object({
      security_retention_days: z
        .number()
        .int()
        .min(SEL_RETENTION_RANGE_DAYS.min)
        .max(SEL_RETENTION_RANGE_DAYS.max)
        .default(365),
      /** gateway.log's rotation and line format (kernel/contracts/owner-settings-logs.ts). */
      max_size_mb: rangeOf(GATEWAY_LOG_SIZE_RANGE_MB),
      max_files: rangeOf(GATEWAY_LOG_FILES_RANGE),
      format: z.enum(GATEWAY_LOG_FORMATS).default("text"),
    })
    .default({
      security_retention_days: 365,
      max_size_mb: GATEWAY_LOG_SIZE_RANGE_MB.default,
      max_files: GATEWAY_LOG_FILES_RANGE.default,
      format: "text",
    }),
  egress: z
    .object({
      /** A PEM file of extra authorities a broker trusts for a secret's origin (origin-tls.ts); empty for none. */
      extra_ca_certs: z
        .string()
        .regex(/^(\/[^\0]{0,4095})?$/, "must be an absolute path or empty")
        .default(""),
    })
    .default({ extra_ca_certs: "" }),
  proxy: z
    .object({
      response_timeout_s: z.number().int().min(PROXY_TIMEOUT_RANGE_S.min).max(PROXY_TIMEOUT_RANGE_S.max).default(30),
    })
    .default({ response_timeout_s: 30 }),
  mcp: z
    .object({
      ask_timeout_s: rangeOf(MCP_ASK_TIMEOUT_RANGE_S),
      call_timeout_s: rangeOf(MCP_CALL_TIMEOUT_RANGE_S),
      max_answer_bytes: rangeOf(MCP_MAX_ANSWER_RANGE_BYTES),
    })
    .default({
      ask_timeout_s: MCP_ASK_TIMEOUT_RANGE_S.default,
      call_timeout_s: MCP_CALL_TIMEOUT_RANGE_S.default,
      max_answer_bytes: MCP_MAX_ANSWER_RANGE_BYTES.default,
    }),
  updates: z.object({ auto: z.enum(["off", "staged"]).default("off") }).default({ auto: "off" }),
  install: z
    .object({
      /** Where `apps add npm:` resolves packages and the sandboxed installer fetches them. */
      npm_registry: z
        .string()
        .refine((value) => packageSourceUrlRefusal(value) === null, "must be an http:// or https:// URL")
        .default(DEFAULT_NPM_REGISTRY),
      /** Where `apps add pypi:` resolves projects and fetches their wheels. */
      pypi_index: z
        .string()
        .refine((value) => packageSourceUrlRefusal(value) === null, "must be an http:// or https:// URL")
        .default(DEFAULT_PYPI_INDEX),
      /** The MCP Registries `apps add registry:` asks, in order; the first that has a name answers. */
      mcp_registries: z
        .array(
          z.string().refine((value) => packageSourceUrlRefusal(value) === null, "must be an http:// or https:// URL"),
        )
        .max(16)
        .default([...DEFAULT_MCP_REGISTRIES]),
    })
    .default({
      npm_registry: DEFAULT_NPM_REGISTRY,
      pypi_index: DEFAULT_PYPI_INDEX,
      mcp_registries: [...DEFAULT_MCP_REGISTRIES],
    }),
});
export type OwnerConfig = z.infer<typeof OwnerConfigSchema>;

/** The owner's limits as the sandbox takes them. */
export function childLimits(config: OwnerConfig): Limits {
  const { processes, memory_mb, storage_mb } = config.sandbox.limits;
  return { processes, memoryBytes: memory_mb * 1024 * 1024, storageBytes: storage_mb * 1024 * 1024 };
}

/** The browser sign-in lifetime in force: a file above the 90-day cap is applied as 90 days (AUTH-19). */
export function sessionTtlInForce(config: OwnerConfig): { seconds: number; capped: boolean } {
  const seconds = config.auth.session_ttl;
  return seconds > SESSION_TTL_RANGE_S.max
    ? { seconds: SESSION_TTL_RANGE_S.max, capped: true }
    : { seconds, capped: false };
}

function reasonOf(error: z.ZodError): string {
  const issue = error.issues[0];
  return `config.json: ${issue.path.join(".")} ${issue.message}`;
}

type RawRead = { ok: true; raw: Record<string, unknown> } | { ok: false; reason: string };

function readRaw(home: string): RawRead {
  let raw: unknown = {};
  try {
    raw = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      return { ok: false, reason: `config.json cannot be read: ${(error as Error).message}` };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    return { ok: false, reason: "config.json is not a JSON object" };
  return { ok: true, raw: raw as Record<string, unknown> };
}

/** Reads config.json; a missing file is the defaults, an invalid one is an error naming the field. */
export function readOwnerConfig(home: string): { ok: true; config: OwnerConfig } | { ok: false; reason: string } {
  const read = readRaw(home);
  if (!read.ok) return read;
  const parsed = OwnerConfigSchema.safeParse(read.raw);
  if (!parsed.success) return { ok: false, reason: reasonOf(parsed.error) };
  return { ok: true, config: parsed.data };
}

function valueAt(document: unknown, path: string): unknown {
  let node = document;
  for (const key of path.split(".")) {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A copy of `document` with `path` set to `value`, keeping every other key the owner wrote. */
function withValueAt(document: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = path.split(".");
  const child = document[head];
  const inner =
    child !== null && typeof child === "object" && !Array.isArray(child) ? (child as Record<string, unknown>) : {};
  return { ...document, [head]: rest.length === 0 ? value : withValueAt(inner, rest.join("."), value) };
}

/** Every editable path's value in force (defaults filled in). */
export function settingsDocument(config: OwnerConfig): SettingsDocument {
  const values: Record<string, SettingValue> = {};
  for (const spec of OWNER_SETTINGS) values[spec.path] = valueAt(config, spec.path) as SettingValue;
  return { values };
}

function refuseValue(path: string, expected: string): never {
  throw new GatewayError("setting_value_invalid", { vars: { path, expected }, detail: { path, expected } });
}

// One write at a time: the revision check and the rename are one step for every caller.
let writing: Promise<unknown> = Promise.resolve();

/**
 * Applies one settings write to config.json: a `set` only while the value is still at the
 * revision it was judged on (409 stale_write otherwise), an `add` or `remove` to what is stored
 * when it lands. The merged file is checked whole before it is written beside and renamed into
 * place (0600), so a refused write leaves the file as it was.
 */
export function writeOwnerSetting(
  home: string,
  write: SettingWrite,
): Promise<{ from: SettingValue; to: SettingValue }> {
  const run = writing.then(() => applyWrite(home, write));
  writing = run.catch(() => undefined);
  return run;
}

async function applyWrite(home: string, write: SettingWrite): Promise<{ from: SettingValue; to: SettingValue }> {
  const spec = settingAt(write.path);
  if (!spec) throw new GatewayError("config_path_not_editable", { vars: { path: write.path.slice(0, 128) } });
  const read = readRaw(home);
  if (!read.ok) throw new GatewayError("config_file_invalid", { vars: { reason: read.reason } });
  const current = OwnerConfigSchema.safeParse(read.raw);
  if (!current.success) throw new GatewayError("config_file_invalid", { vars: { reason: reasonOf(current.error) } });
  const from = valueAt(current.data, spec.path) as SettingValue;
  let to: SettingValue;
  if (write.op === "set") {
    if ((await revisionOf(from)) !== write.expect) throw new GatewayError("stale_write");
    const refusal = settingValueRefusal(spec, write.value);
    if (refusal) refuseValue(spec.path, refusal);
    to = write.value;
  } else {
    if (spec.type !== "name_list") refuseValue(spec.path, "a single value: write it with {path, value}");
    const refusal = settingNameRefusal(spec, write.name);
    if (refusal) refuseValue(spec.path, refusal);
    const names = from as string[];
    to =
      write.op === "add"
        ? names.includes(write.name)
          ? names
          : [...names, write.name]
        : names.filter((n) => n !== write.name);
    const listRefusal = settingValueRefusal(spec, to);
    if (listRefusal) refuseValue(spec.path, listRefusal);
  }
  const next = withValueAt(read.raw, spec.path, to);
  const parsed = OwnerConfigSchema.safeParse(next);
  if (!parsed.success) throw new GatewayError("config_file_invalid", { vars: { reason: reasonOf(parsed.error) } });
  writePrivateFile(join(home, "config.json"), `${JSON.stringify(next, null, 2)}\n`);
  return { from, to };
}
