// The one list of the owner's editable settings (CFG-01/04/06): every path PATCH
// /api/config/personalclaw may write, with its type, default, bounds, meaning and whether a
// change loosens security. config.json's schema (host-bridge/owner-config.ts), the settings
// routes, the manifest's permissions.config check, the dashboard and the CLI all read it;
// a path that is not here has no write surface at all.
import { z } from "zod";
import { MAX_TTL_MS } from "./session";
import { APP_NAME_PATTERN } from "../rules/app-name";
import { bindHostWidens } from "../rules/bind-host-reach";
import { OFFICIAL_MCP_REGISTRY } from "./mcp-registry";
import { MCP_SETTINGS } from "./owner-settings-mcp";
import { LOG_FILE_SETTINGS } from "./owner-settings-logs";

export const SANDBOX_PROCESSES_RANGE = { min: 16, max: 65_536 } as const;
export const SANDBOX_MEMORY_MB_RANGE = { min: 64, max: 1_048_576 } as const;
/** sandbox.limits.storage_mb: an app's data/ and its private /tmp together (docs/design/sandbox.md). */
export const SANDBOX_STORAGE_MB_RANGE = { min: 64, max: 16_777_216 } as const;
export const DEFAULT_SANDBOX_STORAGE_MB = 4096;
/** auth.session_ttl in seconds: five minutes to 90 days (AUTH-19: no sign-in lasts longer). */
export const SESSION_TTL_RANGE_S = { min: 300, max: MAX_TTL_MS / 1000 } as const;
export const DEFAULT_SESSION_TTL_S = 30 * 86_400;
/** Sealed security-log segments older than this many days are removed (SEL-07: 365). */
export const SEL_RETENTION_RANGE_DAYS = { min: 30, max: 3650 } as const;
export const PROXY_TIMEOUT_RANGE_S = { min: 1, max: 300 } as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The npm registry `apps add npm:` uses unless the owner named another (install.npm_registry). */
export const DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org";

/** The PyPI simple index `apps add pypi:` uses unless the owner named another (install.pypi_index). */
export const DEFAULT_PYPI_INDEX = "https://pypi.org/simple/";

/** The MCP Registries `apps add registry:` asks, in order, unless the owner named others (install.mcp_registries). */
export const DEFAULT_MCP_REGISTRIES: readonly string[] = [OFFICIAL_MCP_REGISTRY];

/**
 * Why a text is not a package source's URL, or null: http(s) only, no login in it (it would be
 * shown in every review), no query or fragment, at most 2048 characters.
 */
export function packageSourceUrlRefusal(value: unknown): string | null {
  const expected = "an http:// or https:// URL without a login, query or fragment";
  if (typeof value !== "string" || value.length > 2048) return expected;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return expected;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return expected;
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") return expected;
  return null;
}

export type SettingValue = string | number | string[];

/** One editable setting. `loosens` says whether going from `from` to `to` loosens security. */
export interface SettingSpec {
  path: string;
  /** How the value is written: a whole number, one of a list of words, a list of names, or a text. */
  type: "integer" | "enum" | "name_list" | "host" | "url" | "path";
  default: SettingValue;
  /** What the setting does, as the owner reads it in Settings and `personalclaw config get`. */
  meaning: string;
  unit?: "seconds" | "days" | "MiB" | "processes";
  min?: number;
  max?: number;
  values?: readonly string[];
  /** For a name list: the pattern each name matches (and `accepts`, where a pattern cannot say it all) and how many it may hold. */
  item?: { pattern: RegExp; what: string; maxItems: number; accepts?: (name: string) => boolean };
  /** A security setting: no app may ever declare it in permissions.config (GRANT-01). */
  security: boolean;
  loosens: (from: SettingValue, to: SettingValue) => boolean;
  /** The stable consent name and the question's title when a change loosens. */
  consent: string;
  title: string;
  /** When a written value takes effect. */
  applies: "next_start";
}

const raised = (from: SettingValue, to: SettingValue) => (to as number) > (from as number);
const lowered = (from: SettingValue, to: SettingValue) => (to as number) < (from as number);
const addsNames = (from: SettingValue, to: SettingValue) =>
  (to as string[]).some((name) => !(from as string[]).includes(name));
const never = () => false;
// A list whose order decides (the first source that has a name answers for it): adding a source,
// or moving one ahead of another, changes where code comes from.
const addsOrReorders = (from: SettingValue, to: SettingValue) =>
  addsNames(from, to) ||
  (to as string[]).join("\n") !== (from as string[]).filter((n) => (to as string[]).includes(n)).join("\n");

// How strongly each named bounds mechanism holds a child: a cgroup bounds the whole tree's
// memory and processes, a systemd scope does through one, rlimits only per process.
const BOUNDS_STRENGTH: Record<string, number> = { cgroup: 3, "systemd-scope": 2, rlimit: 1 };
/**
 * sandbox.bounds loosens when the new mechanism may hold children less strongly: `auto` takes
 * the strongest that works, so it is never weaker than a named one; a named one is weaker than
 * `auto` unless it is the strongest (cgroup), and weaker than another named one by rank.
 */
const boundsWeaker = (from: string, to: string) => {
  if (to === "auto") return false;
  if (from === "auto") return to !== "cgroup";
  return BOUNDS_STRENGTH[to] < BOUNDS_STRENGTH[from];
};

export const OWNER_SETTINGS: readonly SettingSpec[] = [
  {
    path: "auth.session_ttl",
    type: "integer",
    unit: "seconds",
    default: DEFAULT_SESSION_TTL_S,
    min: SESSION_TTL_RANGE_S.min,
    max: SESSION_TTL_RANGE_S.max,
    meaning:
      "How long a browser sign-in lasts, in seconds (default 30 days, at most 90 days). Applies to sign-ins opened after the next start.",
    security: true,
    loosens: raised,
    consent: "session_ttl_raise",
    title: "Let browser sign-ins last longer",
    applies: "next_start",
  },
  {
    path: "gateway.bind_host",
    type: "host",
    default: "127.0.0.1",
    meaning:
      "The address the gateway listens on (default 127.0.0.1, this computer only). Any other address lets other machines reach the sign-in page; PERSONALCLAW_BIND_HOST, when set, wins, and auth mode none always listens on loopback.",
    security: true,
    loosens: (from, to) => bindHostWidens(from as string, to as string),
    consent: "bind_beyond_loopback",
    title: "Let other machines reach the gateway",
    applies: "next_start",
  },
  {
    path: "sandbox.mode",
    type: "enum",
    values: ["on", "off"],
    default: "on",
    meaning: "Whether app children run confined by bubblewrap (on) or with your own rights (off).",
    security: true,
    loosens: (from, to) => from === "on" && to === "off",
    consent: "sandbox_off",
    title: "Run app backends without the sandbox",
    applies: "next_start",
  },
  {
    path: "sandbox.limits.processes",
    type: "integer",
    unit: "processes",
    default: 256,
    min: SANDBOX_PROCESSES_RANGE.min,
    max: SANDBOX_PROCESSES_RANGE.max,
    meaning: "How many processes and threads each app child may hold at once.",
    security: true,
    loosens: raised,
    consent: "sandbox_processes_raise",
    title: "Let each app child run more processes",
    applies: "next_start",
  },
  {
    path: "sandbox.limits.memory_mb",
    type: "integer",
    unit: "MiB",
    default: 1024,
    min: SANDBOX_MEMORY_MB_RANGE.min,
    max: SANDBOX_MEMORY_MB_RANGE.max,
    meaning: "How much memory each app child may use, in MiB.",
    security: true,
    loosens: raised,
    consent: "sandbox_memory_raise",
    title: "Let each app child use more memory (MiB)",
    applies: "next_start",
  },
  {
    path: "sandbox.limits.storage_mb",
    type: "integer",
    unit: "MiB",
    default: DEFAULT_SANDBOX_STORAGE_MB,
    min: SANDBOX_STORAGE_MB_RANGE.min,
    max: SANDBOX_STORAGE_MB_RANGE.max,
    meaning:
      "How much each app may store, in MiB: its data/ folder and its private /tmp together (/tmp holds a quarter, data/ the rest). An app whose data/ grows past its share is stopped and stays down.",
    security: true,
    loosens: raised,
    consent: "sandbox_storage_raise",
    title: "Let each app store more (MiB)",
    applies: "next_start",
  },
  {
    path: "sandbox.env_passthrough",
    type: "name_list",
    default: [],
    item: { pattern: ENV_NAME, what: "an environment variable name", maxItems: 64 },
    meaning:
      "Environment variables of yours handed to every app child as they are (cloud session keys, the SSH agent and GnuPG are withheld regardless). Only you set it: no app may declare it.",
    security: true,
    loosens: addsNames,
    consent: "env_passthrough_add",
    title: "Hand your environment variables to every app child",
    applies: "next_start",
  },
  {
    path: "sandbox.network_all",
    type: "name_list",
    default: [],
    item: { pattern: APP_NAME_PATTERN, what: "an app name", maxItems: 256 },
    meaning:
      "Apps whose backends may reach any public host through their egress broker, not only the hosts they declared (never a private or local address).",
    security: true,
    loosens: addsNames,
    consent: "network_all_add",
    title: "Let an app reach any public host",
    applies: "next_start",
  },
  {
    path: "sandbox.bounds",
    type: "enum",
    values: ["auto", "cgroup", "systemd-scope", "rlimit"],
    default: "auto",
    meaning:
      "Which mechanism bounds app children: auto takes the first that works (cgroup, systemd-scope, rlimit); naming one uses only that one.",
    security: true,
    loosens: (from, to) => boundsWeaker(from as string, to as string),
    consent: "bounds_mechanism",
    title: "Bound app children by a weaker mechanism",
    applies: "next_start",
  },
  {
    path: "egress.extra_ca_certs",
    type: "path",
    default: "",
    meaning:
      "A PEM file of extra certificate authorities (a corporate proxy's, say) that an app's egress broker trusts, beside the system's, when it opens TLS to a secret's origin itself. Empty: the system's only.",
    security: true,
    // More authorities may vouch for an origin that receives a secret: any new file is the owner's to consent to.
    loosens: (from, to) => to !== "" && to !== from,
    consent: "extra_ca_certs_change",
    title: "Trust more certificate authorities for secret origins",
    applies: "next_start",
  },
  {
    path: "logs.security_retention_days",
    type: "integer",
    unit: "days",
    default: 365,
    min: SEL_RETENTION_RANGE_DAYS.min,
    max: SEL_RETENTION_RANGE_DAYS.max,
    meaning:
      "How many days sealed security-log segments are kept before they are removed (the log also stays under 512 MiB).",
    security: true,
    loosens: lowered,
    consent: "security_retention_lower",
    title: "Keep security evidence for a shorter time",
    applies: "next_start",
  },
  ...LOG_FILE_SETTINGS,
  {
    path: "proxy.response_timeout_s",
    type: "integer",
    unit: "seconds",
    default: 30,
    min: PROXY_TIMEOUT_RANGE_S.min,
    max: PROXY_TIMEOUT_RANGE_S.max,
    meaning:
      "How long the proxy waits for an app backend's answer to start, for apps whose manifest does not say (an app's own backend.responseTimeoutSeconds wins).",
    security: false,
    loosens: never,
    consent: "proxy_timeout",
    title: "Change the proxy's wait for backends",
    applies: "next_start",
  },
  {
    path: "install.npm_registry",
    type: "url",
    default: DEFAULT_NPM_REGISTRY,
    meaning:
      "The npm registry `apps add npm:` resolves packages from and the sandboxed installer fetches their pinned tarballs from (a corporate mirror, say). An address of this machine or your network is reached only when this URL names it.",
    security: true,
    // A new source of the code apps run: any change is the owner's to consent to.
    loosens: (from, to) => from !== to,
    consent: "npm_registry_change",
    title: "Take npm packages from another registry",
    applies: "next_start",
  },
  {
    path: "install.pypi_index",
    type: "url",
    default: DEFAULT_PYPI_INDEX,
    meaning:
      "The Python package index (PEP 691 JSON simple API) `apps add pypi:` resolves projects from and fetches their sha256-pinned wheels from (a corporate mirror, say). An address of this machine or your network is reached only when this URL names it.",
    security: true,
    // A new source of the code apps run: any change is the owner's to consent to.
    loosens: (from, to) => from !== to,
    consent: "pypi_index_change",
    title: "Take Python packages from another index",
    applies: "next_start",
  },
  {
    path: "install.mcp_registries",
    type: "name_list",
    default: [...DEFAULT_MCP_REGISTRIES],
    item: {
      pattern: /^https?:\/\/\S+$/,
      accepts: (url) => packageSourceUrlRefusal(url) === null,
      what: "an http:// or https:// URL without a login, query or fragment",
      maxItems: 16,
    },
    meaning: `The MCP Registries (registry API v0.1) \`apps add registry:\` asks for a server's entry, in this order: the first that has the name answers. Only ${OFFICIAL_MCP_REGISTRY} is shown as the official registry. An address of this machine or your network is reached only when a URL names it.`,
    security: true,
    // A new source of the code apps run, or another one asked first: the owner's to consent to.
    loosens: addsOrReorders,
    consent: "mcp_registries_change",
    title: "Take MCP servers from other registries",
    applies: "next_start",
  },
  ...MCP_SETTINGS,
  {
    path: "updates.auto",
    type: "enum",
    values: ["off", "staged"],
    default: "off",
    meaning:
      "Whether PersonalClaw may stage its own updates unattended. This build has no unattended updater yet: the value is kept for it and changes nothing now.",
    security: false,
    loosens: never,
    consent: "updates_auto",
    title: "Change unattended updates",
    applies: "next_start",
  },
];

const BY_PATH = new Map(OWNER_SETTINGS.map((spec) => [spec.path, spec]));

/** The editable setting at `path`, or undefined when the path has no write surface. */
export function settingAt(path: string): SettingSpec | undefined {
  return BY_PATH.get(path);
}

/** A whole-document field: its full value is written only over its revision (CONV-10); lists of names also take add/remove (CONV-12). */
export function isWholeDocument(spec: SettingSpec): boolean {
  return spec.type === "name_list";
}

/** Why a value does not fit the setting (a sentence naming its bounds), or null when it fits. */
export function settingValueRefusal(spec: SettingSpec, value: unknown): string | null {
  switch (spec.type) {
    case "integer": {
      if (typeof value !== "number" || !Number.isInteger(value))
        return `a whole number${spec.unit ? ` of ${spec.unit}` : ""}`;
      if (value < spec.min! || value > spec.max!)
        return `from ${describeBound(spec, spec.min!)} to ${describeBound(spec, spec.max!)}`;
      return null;
    }
    case "enum":
      return typeof value === "string" && spec.values!.includes(value)
        ? null
        : `one of ${spec.values!.map((v) => `"${v}"`).join(", ")}`;
    case "host":
      return typeof value === "string" && /^[A-Za-z0-9.:-]{1,253}$/.test(value) ? null : "an IP address or host name";
    case "url":
      return packageSourceUrlRefusal(value);
    case "path":
      return typeof value === "string" && (value === "" || /^\/[^\0]{0,4095}$/.test(value))
        ? null
        : "an absolute path of a file, or empty for none";
    case "name_list": {
      const item = spec.item!;
      if (!Array.isArray(value)) return `a list of names, each ${item.what}`;
      if (value.length > item.maxItems) return `at most ${item.maxItems} names`;
      if (!value.every((name) => itemFits(item, name))) return `a list of names, each ${item.what}`;
      if (new Set(value).size !== value.length) return "a list without repeated names";
      return null;
    }
  }
}

/** Why one name does not fit a name list, or null. */
export function settingNameRefusal(spec: SettingSpec, name: unknown): string | null {
  return itemFits(spec.item!, name) ? null : spec.item!.what;
}

function itemFits(item: NonNullable<SettingSpec["item"]>, name: unknown): boolean {
  return typeof name === "string" && item.pattern.test(name) && (item.accepts?.(name) ?? true);
}

function describeBound(spec: SettingSpec, n: number): string {
  if (spec.unit === "seconds" && n >= 86_400 && n % 86_400 === 0) return `${n / 86_400} days (${n} s)`;
  if (spec.unit === "seconds" && n >= 60 && n % 60 === 0) return `${n / 60} minutes (${n} s)`;
  // A count of processes reads as a bare number ("256 → 4096"); other units are named.
  return `${n}${spec.unit && spec.unit !== "processes" ? ` ${spec.unit}` : ""}`;
}

/** A value as the owner reads it in a from → to sentence ("30 days", "On", "[A, B]"). */
export function describeSettingValue(spec: SettingSpec, value: SettingValue): string {
  if (spec.type === "name_list") return (value as string[]).length === 0 ? "none" : (value as string[]).join(", ");
  if (spec.type === "integer") return describeBound(spec, value as number);
  if (spec.path === "sandbox.mode") return value === "on" ? "On" : "Off";
  return String(value);
}

/** The schema as data, for GET /api/config/personalclaw, the dashboard and the CLI. */
export const SettingDescriptionSchema = z.object({
  path: z.string(),
  type: z.enum(["integer", "enum", "name_list", "host", "url", "path"]),
  default: z.union([z.string(), z.number(), z.array(z.string())]),
  meaning: z.string(),
  unit: z.string().optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  values: z.array(z.string()).optional(),
  item: z.string().optional(),
  security: z.boolean(),
  whole_document: z.boolean(),
  applies: z.literal("next_start"),
});
export type SettingDescription = z.infer<typeof SettingDescriptionSchema>;

export function describeSetting(spec: SettingSpec): SettingDescription {
  const out: SettingDescription = {
    path: spec.path,
    type: spec.type,
    default: spec.default,
    meaning: spec.meaning,
    security: spec.security,
    whole_document: isWholeDocument(spec),
    applies: spec.applies,
  };
  if (spec.unit) out.unit = spec.unit;
  if (spec.min !== undefined) out.min = spec.min;
  if (spec.max !== undefined) out.max = spec.max;
  if (spec.values) out.values = [...spec.values];
  if (spec.item) out.item = spec.item.what;
  return out;
}

/** Every editable path's value as the bridge reads it from config.json (dotted path → value). */
export const SettingsDocumentSchema = z.object({
  values: z.record(z.string(), z.union([z.string(), z.number(), z.array(z.string())])),
});
export type SettingsDocument = z.infer<typeof SettingsDocumentSchema>;

/** One write the bridge applies to config.json: set a value (over `expect`, the revision it was judged on), or add/remove one name. */
export const SettingWriteSchema = z.discriminatedUnion("op", [
  z
    .object({
      op: z.literal("set"),
      path: z.string().max(128),
      value: z.union([z.string(), z.number(), z.array(z.string().max(128)).max(256)]),
      expect: z.string().max(64),
    })
    .strict(),
  z.object({ op: z.literal("add"), path: z.string().max(128), name: z.string().max(128) }).strict(),
  z.object({ op: z.literal("remove"), path: z.string().max(128), name: z.string().max(128) }).strict(),
]);
export type SettingWrite = z.infer<typeof SettingWriteSchema>;

export const SettingWrittenSchema = z.object({
  from: z.union([z.string(), z.number(), z.array(z.string())]),
  to: z.union([z.string(), z.number(), z.array(z.string())]),
});

const SettingValueSchema = z.union([z.string(), z.number(), z.array(z.string())]);

/** What GET /api/config/personalclaw answers: the nested values, each whole-document field's revision, and the schema. */
export const SettingsAnswerSchema = z.object({
  config: z.record(z.string(), z.unknown()),
  revisions: z.record(z.string(), z.string()),
  schema: z.array(SettingDescriptionSchema),
  applies: z.string(),
});
/** What PATCH /api/config/personalclaw answers for a write it applied. */
export const SettingChangedAnswerSchema = z.object({
  path: z.string(),
  value: SettingValueSchema,
  applies: z.string(),
  revision: z.string().optional(),
});
