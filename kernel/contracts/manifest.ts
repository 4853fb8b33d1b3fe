// The app.json contract, shared by the gateway, the host bridge and the CLI. An app's manifest
// is written by whoever wrote the app: every field is parsed strictly, a boolean is JSON
// true/false and a list is a list (never coerced: iterating "*" as characters would widen a
// grant), and unknown top-level keys are kept for display but never trusted.
import { z } from "zod";
import { FOLDER_NEED_PATTERN, FolderAccessSchema, folderEnvName } from "./folder-grants";
import { NetworkGrantSchema } from "../rules/network-grant";
import { GatewayError, type ErrorCode } from "./errors";
import { settingAt } from "./owner-settings";
import { declaredSecretNameRefusal } from "./secrets";
import { nextFireAfter, parseCronSchedule } from "../time/cron-schedule";
import { AppNameSchema } from "../rules/app-name";
import { EVENT_CLASSES } from "../rules/event-names";

const shortText = (max: number) => z.string().min(1).max(max);

/** The event names an app may declare, as the manifest reference lists them. */
function declarableEventNames(): string {
  return Object.entries(EVENT_CLASSES)
    .filter(([, entry]) => entry.tier === "declarable")
    .map(([name]) => `\`${name}\``)
    .join(", ");
}
const stringList = z.array(z.string().max(512)).max(512);

/** A relative path inside the app folder (checked for escapes after parsing, see RESOURCE_PATH_FIELDS). */
const resourcePath = z.string().min(1).max(1024);

/**
 * A command the host bridge spawns as `file, args[]` — never a shell string, so there is no
 * quoting to get wrong and nothing for a shell to expand. Hooks use this same shape.
 */
export const CommandSchema = z.object({
  command: z.string().min(1).max(1024).meta({
    description:
      "The program to run, spawned directly (no shell), in the app's sandbox with its folder as working directory.",
    owner: "The command, as written.",
  }),
  args: z
    .array(z.string().max(4096))
    .max(256)
    .meta({
      description: "Its arguments, one string each; nothing is split, quoted or expanded.",
      owner: "Every argument, as written.",
      byDefault: "none",
    })
    .optional(),
});
export type Command = z.infer<typeof CommandSchema>;

export const BackendSchema = z.object({
  command: z.string().min(1).max(1024).meta({
    description:
      "The backend's program (`node`, `python3`, or a file in the app folder), spawned directly, never through a shell. `python`/`python3` is the app's own venv when it declares Python dependencies.",
    owner: "The command and arguments, as written.",
  }),
  args: z
    .array(z.string().max(4096))
    .max(256)
    .meta({ description: "Its arguments, one string each.", owner: "Every argument.", byDefault: "none" })
    .optional(),
  entryPoint: resourcePath
    .meta({
      description: "The file the backend runs, relative to the app folder; it must not lie inside the UI folder.",
      owner: "The entry point.",
    })
    .optional(),
  // The health path is exempt from the proxy signature, so it must be a plain absolute path:
  // no query, no encoded characters, nothing a router could read two ways.
  healthCheck: z
    .string()
    .max(256)
    .regex(/^\/[A-Za-z0-9._~\-/]*$/, "must be an absolute path of letters, digits and . _ ~ - /")
    .meta({
      description:
        "The path probed with GET every 10 s; it must answer 2xx. It is the one path reached without the proxy signature.",
      owner: "The health path.",
      byDefault: "/health",
    })
    .optional(),
  /** Seconds the proxy waits for the backend to start answering (default 30, at most BACKEND_RESPONSE_TIMEOUT_CEILING_S). */
  responseTimeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(300)
    .meta({
      description:
        "Seconds a proxied request waits for the backend's answer to start before the gateway answers 504 app_backend_timeout.",
      byDefault: "30",
    })
    .optional(),
});

/** The proxy waits this long for a backend's answer to start unless its manifest says otherwise. */
export const BACKEND_RESPONSE_TIMEOUT_DEFAULT_S = 30;
/** No manifest can make a request wait longer than this for its answer to start. */
export const BACKEND_RESPONSE_TIMEOUT_CEILING_S = 300;

export const UiSchema = z.object({
  entry: resourcePath
    .meta({
      description:
        "The UI's first page, in a sub-folder of the app (e.g. `ui/index.html`). That folder is served, inert and sandboxed, at /apps/<name>/; it may not be data/ or an installer folder, nor hold the backend's code.",
      owner: "The UI entry.",
    })
    .optional(),
  pages: z
    .array(
      z.object({
        entryPoint: resourcePath.meta({ description: "A further page, inside the UI folder.", owner: "Each page." }),
        title: shortText(120).meta({ description: "Its title in the dashboard.", owner: "The title." }).optional(),
      }),
    )
    .max(64)
    .meta({ description: "More pages of the UI, listed in the dashboard.", byDefault: "none" })
    .optional(),
});

export const AgentTierSchema = z.enum(["text", "read", "tools"]);

/**
 * GRANT-01: the owner settings an app may reach. A list names paths it may read; the object
 * form names what it may read and, separately, write (a written path is also readable).
 */
export const ConfigGrantSchema = z.union([
  stringList,
  z
    .object({
      read: stringList.meta({ description: "Settings paths the app may read.", owner: "Every path." }).optional(),
      write: stringList
        .meta({
          description: "Settings paths the app may also write (a written path is readable too).",
          owner: "Every path.",
          review: "Changes settings",
        })
        .optional(),
    })
    .strict(),
]);
export type ConfigGrant = z.infer<typeof ConfigGrantSchema>;

/** The settings paths a config grant lets an app read and write. */
export function configGrantPaths(grant: ConfigGrant | undefined): { read: string[]; write: string[] } {
  if (grant === undefined) return { read: [], write: [] };
  if (Array.isArray(grant)) return { read: [...grant], write: [] };
  const write = [...(grant.write ?? [])];
  return { read: [...new Set([...(grant.read ?? []), ...write])], write };
}

/** A folder the app asks the owner for: the owner chooses which, and it appears at /folders/<name>. */
export const FolderNeedSchema = z
  .object({
    name: z.string().regex(FOLDER_NEED_PATTERN, "must be 1 to 64 letters, digits, - or _").meta({
      description:
        "The need's name: the folder appears at `/folders/<name>` and in `PERSONALCLAW_FOLDER_<NAME>` (upper-cased, `-` as `_`).",
      owner: "The name.",
    }),
    why: shortText(500).meta({ description: "Why the app needs a folder.", owner: "The reason." }),
    access: FolderAccessSchema.meta({
      description:
        "`read` or `read-write`: the most the owner may grant. The owner may always grant less (read-only), never more.",
      owner: "The most it may get.",
    }),
  })
  .strict();

export const PermissionsSchema = z.object({
  api: stringList
    .meta({
      description:
        "Gateway path prefixes the app's token may call, matched on the path at a segment boundary. The app always reaches its own /apps/<name>/ and /api/apps/<name>/; owner-only routes refuse every app whatever it declares.",
      owner: "Every prefix.",
      byDefault: "its own paths only",
      review: "Calls gateway paths",
    })
    .optional(),
  config: ConfigGrantSchema.meta({
    description:
      'Owner settings the app may read (a list of paths) or read and write ({"read": [...], "write": [...]}) through /api/config/personalclaw; `api` must also name /api/config. Only non-security settings: a security or unknown path refuses the bundle.',
    owner: "What it may read and what it may write.",
    byDefault: "none",
    review: "Reads settings",
  }).optional(),
  events: stringList
    .meta({
      description: `Platform events the app's live socket (/api/ws) hears, exact names: the lifecycle and health of every installed app (${declarableEventNames()}). The app hears them; no app publishes platform events.`,
      owner: "Every name, as what its live socket hears.",
      byDefault: "none",
      review: "Hears on its live socket",
    })
    .optional(),
  eventSubscriptions: stringList
    .meta({
      description:
        "Platform events delivered to the app's inbox (read with GET /api/apps/message, from `@platform`), exact names only: no prefix, no `*`; the same names as `events`. The app receives them; it publishes nothing.",
      owner: "Every name, as what reaches its inbox.",
      byDefault: "none",
      review: "Receives in its inbox",
    })
    .optional(),
  mcpTools: stringList
    .meta({
      description:
        "MCP tools the app may ask the agent to invoke. The gateway shows and records the list; it runs no tools for apps itself.",
      owner: "Every tool.",
      byDefault: "none",
      review: "May ask the agent to run MCP tools",
    })
    .optional(),
  memory: z
    .boolean()
    .meta({
      description:
        "Whether the app may reach the agent's memory. The gateway hosts no memory store; the grant is shown and recorded.",
      owner: "Yes or no.",
      byDefault: "false",
      review: "Reaches the agent's memory",
    })
    .optional(),
  cron: z
    .boolean()
    .meta({
      description: "Whether the app's `crons` register.",
      owner: "Yes or no.",
      byDefault: "false",
      review: "Registers scheduled jobs",
    })
    .optional(),
  storage: z
    .boolean()
    .meta({
      description:
        "Whether the app gets a writable data/ folder (PERSONALCLAW_APP_DATA_DIR); without it the whole app folder is read-only.",
      owner: "Yes or no.",
      byDefault: "false",
      review: "Writes its own data/ folder",
    })
    .optional(),
  agent: AgentTierSchema.meta({
    description:
      "The agent tier the app's work runs at: `text` (the task text only), `read` (read-only tools), `tools` (the owner's tools). Jobs without a route need one.",
    owner: "The tier.",
    byDefault: "none",
    review: "Agent tier its work runs at",
  }).optional(),
  appMessaging: stringList
    .meta({
      description:
        "Apps this app may message through POST /api/apps/message. A trailing `*` is a name prefix and covers apps installed later.",
      owner: "Every target, prefixes marked.",
      byDefault: "none",
      review: "Sends messages to apps",
    })
    .optional(),
  /** The app may raise approvals for the owner to answer (POST /api/approvals); a strict boolean. */
  approvals: z
    .boolean()
    .meta({
      description: "Whether the app may raise approvals (questions) in the owner's Inbox.",
      owner: "Yes or no.",
      byDefault: "false",
      review: "Asks you questions in the Inbox",
    })
    .optional(),
  // Enforced: the only hosts the app's children reach, through its egress broker (network-grant.ts).
  network: NetworkGrantSchema.meta({
    description:
      "The hosts the app's processes may reach, enforced by its own egress broker: `false` for no network, or patterns such as `api.example.com` (port 443), `api.example.com:8443`, `*.example.com` (subdomains, not the apex), `203.0.113.7:80`, `host:*` (any port). A name that resolves to a local or metadata address is refused.",
    owner: "Every host, marked as enforced.",
    byDefault: "no network",
    review: "Reaches hosts (enforced)",
  }).optional(),
  // Enforced by the mount plan: nothing is visible until the owner grants a folder to a need.
  folders: z
    .array(FolderNeedSchema)
    .max(16)
    .meta({
      description:
        "Folders the app asks the owner for. The app sees nothing of the owner's files until the owner grants a folder to a need (`personalclaw apps folders`); the folder then appears, alone, at `/folders/<name>` in every process of the app (backend and MCP servers, never hooks or installers), read-only unless the need says `read-write` and the owner chose so.",
      owner: "Every need, its reason and its most access.",
      byDefault: "none",
      review: "Asks for folders you choose",
    })
    .optional(),
});

/** A job's route: an absolute path on the app's own backend, plain like the health path. */
const jobRoute = z
  .string()
  .max(256)
  .regex(/^\/[A-Za-z0-9._~\-/]*$/, "must be an absolute path of letters, digits and . _ ~ - /");

/** A job waits this long for the backend's answer unless its manifest says otherwise. */
export const JOB_TIMEOUT_DEFAULT_S = 60;

export const CronSchema = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be letters, digits, . _ - (at most 64)")
    .meta({ description: "The job's name, unique in the app; sent as X-PersonalClaw-Job.", owner: "The name." }),
  /** Five cron fields (cron-schedule.ts), read in `timezone`. */
  schedule: shortText(120).meta({
    description:
      "Five cron fields (minute hour day-of-month month day-of-week), read in `timezone`; it must fire at least once.",
    owner: "The schedule.",
  }),
  /** UTC (the default) or an IANA zone name such as Europe/Paris. */
  timezone: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: "An IANA zone name such as Europe/Paris.", owner: "The zone.", byDefault: "UTC" })
    .optional(),
  /** The path on the app's backend each fire POSTs to, signed like a proxied request. */
  route: jobRoute
    .meta({
      description:
        'The path on the app\'s backend each fire POSTs {"job", "scheduledFor"} to, signed like a proxied request. A job without a route is an agent prompt and needs `permissions.agent`.',
      owner: "The route.",
    })
    .optional(),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(900)
    .meta({
      description: "Seconds the backend has to answer 2xx before the fire counts as failed.",
      owner: "The timeout.",
      byDefault: "60",
    })
    .optional(),
  prompt: z
    .string()
    .max(8192)
    .meta({ description: "The task text of an agent-prompt job (one without a route)." })
    .optional(),
  enabled: z
    .boolean()
    .meta({ description: "Whether the job fires.", owner: "Whether it is on.", byDefault: "true" })
    .optional(),
  // Parsed so a non-boolean is refused; ignored when the job is registered (CRON-02).
  silent: z.boolean().meta({ description: "Parsed and ignored: a job delivers nothing to a chat." }).optional(),
  persistent_session: z.boolean().meta({ description: "Parsed and ignored." }).optional(),
});

// A server name becomes the `<app>:<server>` key in mcp.json, so neither ':' nor '/' (MCP-08).
const mcpServerName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be letters, digits, . _ - (no ':' or '/')");

export const McpServerSchema = z.object({
  /** stdio (the default): PersonalClaw starts `command` in the app's sandbox; http: a remote server at `url`. */
  transport: z
    .enum(["stdio", "http"])
    .meta({
      description:
        "`stdio`: PersonalClaw starts `command` in the app's sandbox when the agent connects; `http`: a remote server at `url`.",
      owner: "The transport.",
      byDefault: "stdio",
    })
    .optional(),
  command: z
    .string()
    .min(1)
    .max(1024)
    .meta({ description: "A stdio server's program, spawned directly in the app's sandbox.", owner: "The command." })
    .optional(),
  url: z.string().max(2048).meta({ description: "An http server's https:// URL.", owner: "The URL." }).optional(),
  args: z
    .array(z.string().max(4096))
    .max(256)
    .meta({ description: "A stdio server's arguments.", owner: "Every argument.", byDefault: "none" })
    .optional(),
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(4096))
    .meta({
      description: "Variables set for a stdio server, on top of the sandbox's allowlisted environment.",
      owner: "The names (not the values).",
      byDefault: "none",
    })
    .optional(),
});

export const DependenciesSchema = z.object({
  pythonDependencies: z
    .array(z.string().min(1).max(512))
    .max(512)
    .meta({
      description:
        "Python requirements, installed into the app's own venv from the wheels it ships in wheels/ (no index, no source builds), in the sandbox without network.",
      owner: "Every requirement.",
      byDefault: "none",
    })
    .optional(),
  npmPackages: z
    .array(z.string().min(1).max(214))
    .max(128)
    .meta({
      description:
        "Registry packages (`name`, `name@1.2.3`, `name@^1.2`, `@scope/name@~1.0.0`) installed in the sandbox with install scripts off; `file:`, `git+`, URLs, aliases and dist-tags are refused.",
      owner: "Every package.",
      byDefault: "none",
    })
    .optional(),
  npmClosure: z
    .literal(true)
    .meta({
      description:
        "Install exactly the npm packages pinned in the app's `npm-closure.json` (each with its place, tarball URL and sha512 integrity), with `npm ci` exactness, in the sandbox with install scripts off; `apps add npm:` writes it.",
      owner: "The source, the package count and size, and which packages carry native code.",
      byDefault: "no closure",
    })
    .optional(),
});

/** setup hooks: onUpdate is parsed and validated but never executed (MAN-12). */
export const SetupSchema = z.object({
  onInstall: CommandSchema.meta({
    description:
      "Run once in the sandbox, without network, after the files are in place (bounded to 60 s). Make it idempotent.",
    owner: "The command and its time bound.",
  }).optional(),
  onUninstall: CommandSchema.meta({
    description: "Run in the sandbox, without network, before the app is removed (bounded to 60 s).",
    owner: "The command and its time bound.",
  }).optional(),
  onUpdate: CommandSchema.meta({
    description: "Parsed and validated, never run: make `onInstall` idempotent instead.",
    owner: "That it is declared and does not run.",
  }).optional(),
});

export const LAUNCH_INHERITS = ["sign-in", "settings", "auto-approve-rules", "folder-settings"] as const;

export const LaunchedProgramSchema = z.object({
  program: shortText(256).meta({
    description: "A program the app starts (`*` for programs the owner chooses).",
    owner: "The program.",
  }),
  why: shortText(500).meta({ description: "Why the app starts it.", owner: "The reason." }),
  inherits: z
    .array(z.enum(LAUNCH_INHERITS))
    .max(4)
    .meta({
      description:
        "What the program inherits from the owner: `sign-in`, `settings`, `auto-approve-rules`, `folder-settings`.",
      owner: "Each inheritance.",
      byDefault: "nothing",
    })
    .optional(),
  inheritsWhile: z
    .object({
      setting: shortText(128).meta({ description: "A boolean setting.", owner: "The setting." }),
      value: z.boolean().meta({ description: "The value it must have.", owner: "The value." }),
    })
    .meta({ description: "The inheritance holds only while this setting has this value.", owner: "The condition." })
    .optional(),
  hosts: z
    .array(z.string().regex(/^[A-Za-z0-9.-]+$/, "must be a host name"))
    .max(64)
    .meta({
      description: "Hosts the program contacts (a bare domain covers its subdomains).",
      owner: "Every host.",
      byDefault: "none",
    })
    .optional(),
  npmPackage: z
    .string()
    .max(214)
    .meta({
      description: 'For `program: "npx"`: the package npx runs, without a version (each start fetches the newest).',
      owner: "The package.",
    })
    .optional(),
});

/** A secret the app asks the owner for: it arrives as the environment variable `name` at its backend's start. */
export const DeclaredSecretSchema = z
  .object({
    name: z.string().min(1).max(64).meta({
      description:
        "The environment variable the secret arrives as: capital letters, digits and `_`; names a loader or the bridge reads (`PATH`, `NODE_OPTIONS`, `PERSONALCLAW_*`, `LD_*`, ...) and the prefixes `PCSECRET_`/`PCPROJ_` are refused.",
      owner: "The name.",
    }),
    why: shortText(500).meta({ description: "Why the app needs it.", owner: "The reason." }),
  })
  .strict();

export const ExternalWriteSchema = z.object({
  path: shortText(1024).meta({
    description: "A place outside the app folder the app's code writes.",
    owner: "The path.",
  }),
  why: shortText(500).meta({ description: "Why.", owner: "The reason." }),
});

/** A prerequisite PersonalClaw does not install, within the lengths the consent dialog shows. */
export const PrerequisiteSchema = z.object({
  name: shortText(64).meta({
    description: "What the app needs that PersonalClaw does not install (e.g. `Node.js 20`).",
    owner: "The name, first in the review.",
  }),
  why: shortText(200).meta({ description: "Why it is needed.", owner: "The reason." }),
  how: shortText(300).meta({ description: "How the owner gets it.", owner: "The instructions." }),
});

export const AppManifestSchema = z.looseObject({
  name: AppNameSchema.meta({
    description:
      "The app's name, in its paths /apps/<name>/ and /api/apps/<name>/. Names the gateway's own routes use where an app's name goes (such as `installs`, `message`, `preview`, `parked` under /api/apps/), and `registry`, `registries`, `blob`, `install`, `register` and `sources`, kept for the platform's own routes, are reserved.",
    owner: "The name.",
  }),
  version: shortText(64).meta({
    description: "The app's version; updates compare versions in PEP 440 order, reading semver pre-releases too.",
    owner: "The version.",
  }),
  displayName: shortText(120)
    .meta({ description: "The name people see.", owner: "The display name.", byDefault: "the name" })
    .optional(),
  description: z
    .string()
    .max(2000)
    .meta({ description: "What the app does, in a paragraph.", owner: "The description." })
    .optional(),
  icon: resourcePath.meta({ description: "An image file in the app folder." }).optional(),
  backend: BackendSchema.meta({
    description: "A process the gateway starts, confined, and proxies /apps/<name>/api/ to. Omit it for a UI-only app.",
    owner: "The command, entry point and health path.",
    byDefault: "no backend",
  }).optional(),
  ui: UiSchema.meta({
    description: "Static pages served at /apps/<name>/.",
    owner: "The entry and pages.",
    byDefault: "no UI",
  }).optional(),
  permissions: PermissionsSchema.meta({
    description: "What the app may reach; everything not granted is refused.",
    owner: "Every grant.",
    byDefault: "nothing",
  }).optional(),
  crons: z
    .array(CronSchema)
    .max(64)
    .meta({
      description: "Scheduled jobs; they register only with `permissions.cron`.",
      owner: "Every job, its schedule and whether it registers.",
      byDefault: "none",
    })
    .optional(),
  mcpServers: z
    .record(mcpServerName, McpServerSchema)
    .meta({
      description:
        "MCP servers the agent finds in mcp.json as `<app>:<server>`; a server name is letters, digits, `.`, `_`, `-`.",
      owner: "Each server's sealed definition.",
      byDefault: "none",
    })
    .optional(),
  dependencies: DependenciesSchema.meta({
    description: "Packages installed into the app folder at install, in the sandbox.",
    owner: "Every package.",
    byDefault: "none",
  }).optional(),
  setup: SetupSchema.meta({
    description: "Hooks run at install and uninstall, in the sandbox without network.",
    owner: "Each hook and its time bound.",
    byDefault: "none",
  }).optional(),
  launches: z
    .array(LaunchedProgramSchema)
    .max(64)
    .meta({
      description: "Programs the app starts and what they inherit; an update that widens them asks consent again.",
      owner: "Every program, reason and host.",
      byDefault: "none",
    })
    .optional(),
  writes: z
    .array(ExternalWriteSchema)
    .max(64)
    .meta({
      description: "Every place outside the app folder its code writes; an update that widens them asks consent again.",
      owner: "Every path and reason.",
      byDefault: "none",
    })
    .optional(),
  requires: z
    .array(PrerequisiteSchema)
    .max(32)
    .meta({ description: "Prerequisites PersonalClaw does not install.", owner: "Shown first.", byDefault: "none" })
    .optional(),
  secrets: z
    .array(DeclaredSecretSchema)
    .max(32)
    .meta({
      description:
        "Secrets the app asks the owner for. Nothing arrives until the owner stores one and assigns it to the app; it then reaches the backend as the environment variable `name` at its next start, masked in its log.",
      owner: "Every name and reason.",
      byDefault: "none",
    })
    .optional(),
  minPersonalClawVersion: z
    .string()
    .max(64)
    .meta({
      description:
        "The oldest PersonalClaw the app runs on; checked each time a bundle is read, at review, install and update (a refusal names it). Enable and start run the copy that passed that check on this core; an installed app is not checked again if an older PersonalClaw is put in place.",
      byDefault: "any",
    })
    .optional(),
  requiresCoreFeatures: z
    .array(z.string().min(1).max(128))
    .max(128)
    .meta({
      description: "Features this core must offer; a missing one refuses the app, naming it.",
      byDefault: "none",
    })
    .optional(),
  quality: z
    .record(z.string().max(64), z.boolean())
    .meta({ description: "Quality claims (`tested`, `designSystem`, `a11y`).", byDefault: "no claims" })
    .optional(),
  native: z
    .boolean()
    .meta({
      description: "Only the package's own apps/native/ folder may say true; anywhere else it refuses the bundle.",
      byDefault: "false",
    })
    .optional(),
});
export type AppManifest = z.infer<typeof AppManifestSchema>;

export type ManifestRefusal = {
  ok: false;
  code: ErrorCode;
  message: string;
  field: string;
  detail?: Record<string, unknown>;
};
export type ManifestValidation = { ok: true; manifest: AppManifest } | ManifestRefusal;

export interface ValidateManifestOptions {
  reservedNames: ReadonlySet<string>;
  /** True only for the package's own native folder (MAN-03). */
  fromNativeFolder: boolean;
  core: { version: string; features: readonly string[] };
}

function refusal(
  code: ErrorCode,
  field: string,
  vars: Record<string, string> = {},
  detail?: Record<string, unknown>,
): ManifestRefusal {
  const message = new GatewayError(code, { vars: { field, ...vars } }).message;
  return detail ? { ok: false, code, message, field, detail } : { ok: false, code, message, field };
}

function fieldName(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out === "" ? "(manifest)" : out;
}

/**
 * A resource path is refused if it is rooted or has a `..` segment in either the POSIX or the
 * Windows flavour, so the verdict is identical on every host (MAN-06). `a..b` is a plain name.
 */
export function isEscapingResourcePath(p: string): boolean {
  if (p.includes("\0")) return true;
  if (p.startsWith("/") || p.startsWith("\\")) return true;
  // A drive letter roots a path even without a separator: `D:evil.py` is relative to D:'s cwd.
  if (/^[A-Za-z]:/.test(p)) return true;
  return p.split(/[\\/]/).some((segment) => segment === "..");
}

/** Which manifest fields name files inside the app folder. */
function resourcePathFields(m: AppManifest): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (m.icon !== undefined) out.push(["icon", m.icon]);
  if (m.backend?.entryPoint !== undefined) out.push(["backend.entryPoint", m.backend.entryPoint]);
  if (m.ui?.entry !== undefined) out.push(["ui.entry", m.ui.entry]);
  m.ui?.pages?.forEach((page, i) => out.push([`ui.pages[${i}].entryPoint`, page.entryPoint]));
  for (const key of ["agents", "skills", "sops"] as const) {
    const list = (m as Record<string, unknown>)[key];
    if (Array.isArray(list)) list.forEach((item, i) => typeof item === "string" && out.push([`${key}[${i}]`, item]));
  }
  return out;
}

// ---- Version ordering (MAN-02) --------------------------------------------------------------
// One comparison for every version check: PEP 440 ordering, also reading semver pre-release
// spellings, so a release candidate or dev build sorts before its release (0.3.0rc1 < 0.3.0,
// 0.3.0-rc.1 < 0.3.0, 0.3.0.dev1 < 0.3.0a1).

const VERSION_RE =
  /^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d+)?)?(?:[-_.]?(post|rev|r)[-_.]?(\d+)?)?(?:[-_.]?(dev)[-_.]?(\d+)?)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$/i;

const PRE_RANK: Record<string, number> = { a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2 };

/** A sortable key for a version string, or null when it is not a version. */
export function parseVersion(text: string): number[] | null {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return null;
  const release = m[1]!.split(".").map(Number);
  while (release.length > 1 && release[release.length - 1] === 0) release.pop();
  while (release.length < 8) release.push(0);
  if (release.length > 8) return null;
  const hasPre = m[2] !== undefined;
  const hasPost = m[4] !== undefined;
  const hasDev = m[6] !== undefined;
  // A bare dev release (1.0.dev1) sorts before every pre-release of 1.0.
  const preRank = hasPre ? PRE_RANK[m[2]!.toLowerCase()]! : hasDev && !hasPost ? -1 : 3;
  const preNum = hasPre ? Number(m[3] ?? 0) : 0;
  const postNum = hasPost ? Number(m[5] ?? 0) : -1;
  const devNum = hasDev ? Number(m[7] ?? 0) : Number.MAX_SAFE_INTEGER;
  return [...release, preRank, preNum, postNum, devNum];
}

/** Negative, zero or positive as a sorts before, with or after b; null if either is not a version. */
export function compareVersions(a: string, b: string): number | null {
  const ka = parseVersion(a);
  const kb = parseVersion(b);
  if (!ka || !kb) return null;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
  return 0;
}

/** MAN-02: refuse an app whose floor is above this core or that needs a feature this core lacks. */
export function checkCoreCompatibility(
  m: Pick<AppManifest, "minPersonalClawVersion" | "requiresCoreFeatures">,
  core: { version: string; features: readonly string[] },
): ManifestRefusal | null {
  if (m.minPersonalClawVersion !== undefined) {
    const order = compareVersions(m.minPersonalClawVersion, core.version);
    if (order === null) {
      return refusal(
        "core_incompatible",
        "minPersonalClawVersion",
        {
          reason: `the app's minPersonalClawVersion '${m.minPersonalClawVersion}' or this core's version '${core.version}' is not a version`,
        },
        { minPersonalClawVersion: m.minPersonalClawVersion, coreVersion: core.version },
      );
    }
    if (order > 0) {
      return refusal(
        "core_incompatible",
        "minPersonalClawVersion",
        { reason: `the app needs PersonalClaw ${m.minPersonalClawVersion} or later and this is ${core.version}` },
        { minPersonalClawVersion: m.minPersonalClawVersion, coreVersion: core.version },
      );
    }
  }
  const offered = new Set(core.features);
  const missing = (m.requiresCoreFeatures ?? []).filter((f) => !offered.has(f));
  if (missing.length > 0) {
    return refusal(
      "core_incompatible",
      "requiresCoreFeatures",
      {
        reason: `this core (${core.version}) does not offer the feature${missing.length > 1 ? "s" : ""} ${missing.map((f) => `'${f}'`).join(", ")}`,
      },
      { missingFeatures: missing, coreVersion: core.version },
    );
  }
  return null;
}

/**
 * Validates an untrusted app.json value for review, install and update. Refusals name the
 * field: `field_not_a_boolean` for a boolean that is not JSON true/false, `manifest_invalid`
 * for any other shape error, then name, native, resource path and core checks.
 */
export function validateManifest(raw: unknown, opts: ValidateManifestOptions): ManifestValidation {
  const parsed = AppManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = fieldName(issue.path);
    if (issue.code === "invalid_type" && issue.expected === "boolean") {
      return refusal("field_not_a_boolean", field);
    }
    return refusal("manifest_invalid", field, { reason: issue.message }, { field });
  }
  const manifest = parsed.data;

  if (opts.reservedNames.has(manifest.name)) {
    return refusal("app_name_reserved", "name", { name: manifest.name });
  }
  if (manifest.native === true && !opts.fromNativeFolder) {
    return refusal("manifest_native_refused", "native");
  }
  for (const [field, value] of resourcePathFields(manifest)) {
    if (isEscapingResourcePath(value)) return refusal("manifest_path_escapes", field, {}, { field, value });
  }
  const uiFolder = checkUiFolder(manifest);
  if (uiFolder) return uiFolder;
  const semantic = checkSemanticRules(manifest);
  if (semantic) return semantic;
  const incompatible = checkCoreCompatibility(manifest, opts.core);
  if (incompatible) return incompatible;
  return { ok: true, manifest };
}

/** Rules a field-by-field schema cannot state (MAN-04, MAN-07). */
function checkSemanticRules(m: AppManifest): ManifestRefusal | null {
  const invalid = (field: string, reason: string) => refusal("manifest_invalid", field, { reason }, { field });
  // A job fires a signed request at the app's backend: it needs the cron grant, a backend, a
  // route on it and a schedule that has a next fire (issue 20).
  for (const [i, job] of (m.crons ?? []).entries()) {
    if (job.route === undefined) {
      // The agent-prompt form (MAN-04): a job without a route fires an agent at the app's tier.
      if (m.permissions?.agent === undefined)
        return invalid("crons", "scheduled jobs need permissions.agent (an agent tier)");
      continue;
    }
    if (m.permissions?.cron !== true) return invalid(`crons[${i}]`, "a scheduled job needs permissions.cron: true");
    if (!m.backend)
      return invalid(`crons[${i}].route`, "a job's route is on the app's backend, and the app declares none");
    const schedule = parseCronSchedule(job.schedule, job.timezone ?? "UTC");
    if (typeof schedule === "string") return invalid(`crons[${i}].schedule`, schedule);
    if (nextFireAfter(schedule, Date.UTC(2000, 0, 1)) === null)
      return invalid(`crons[${i}].schedule`, "the schedule never fires");
  }
  // Two needs whose environment names collide (`a-b` and `a_b`) would name one variable twice.
  const folderEnvs = (m.permissions?.folders ?? []).map((need) => folderEnvName(need.name));
  if (new Set(folderEnvs).size !== folderEnvs.length)
    return invalid("permissions.folders", "two folder needs have the same name (case and - or _ aside)");
  const jobNames = (m.crons ?? []).map((j) => j.name);
  if (new Set(jobNames).size !== jobNames.length) return invalid("crons", "two jobs have the same name");
  for (const [name, server] of Object.entries(m.mcpServers ?? {})) {
    const transport = server.transport ?? "stdio";
    if (transport === "stdio" && server.command === undefined)
      return invalid(`mcpServers.${name}.command`, "a stdio server needs a command");
    if (transport === "stdio" && server.url !== undefined)
      return invalid(`mcpServers.${name}.url`, "a stdio server has no url");
    if (transport === "http") {
      if (server.command !== undefined || server.args !== undefined)
        return invalid(`mcpServers.${name}.command`, "an http server has a url, not a command");
      if (mcpRemoteHost(server.url ?? "") === null)
        return invalid(`mcpServers.${name}.url`, "an http server needs an https:// URL naming a host");
    }
  }
  // GRANT-01: only editable settings, and never a security one (refused at preview).
  const grant = m.permissions?.config;
  const grantFields: Array<[string, string]> = Array.isArray(grant)
    ? grant.map((path, i) => [`permissions.config[${i}]`, path])
    : [
        ...(grant?.read ?? []).map((path, i): [string, string] => [`permissions.config.read[${i}]`, path]),
        ...(grant?.write ?? []).map((path, i): [string, string] => [`permissions.config.write[${i}]`, path]),
      ];
  for (const [field, path] of grantFields) {
    const spec = settingAt(path);
    if (!spec) return invalid(field, `'${path.slice(0, 128)}' is not an editable setting`);
    if (spec.security) return refusal("manifest_config_security", field, { path }, { field, path });
  }
  const seen = new Set<string>();
  for (const [i, secret] of (m.secrets ?? []).entries()) {
    const why = declaredSecretNameRefusal(secret.name);
    if (why) return invalid(`secrets[${i}].name`, `'${secret.name}' ${why}`);
    if (seen.has(secret.name)) return invalid(`secrets[${i}].name`, `'${secret.name}' is declared twice`);
    seen.add(secret.name);
  }
  for (const [i, spec] of (m.dependencies?.npmPackages ?? []).entries()) {
    const field = `dependencies.npmPackages[${i}]`;
    if (!isRegistryNpmSpec(spec))
      return refusal("manifest_npm_not_registry", field, { spec: spec.slice(0, 214) }, { field, value: spec });
  }
  for (const [i, launch] of (m.launches ?? []).entries()) {
    if (launch.program === "npx") {
      if (launch.npmPackage === undefined)
        return invalid(`launches[${i}].npmPackage`, "an npx launch must name the npm package npx runs");
      // No version: consent says each start fetches the newest version.
      if (!/^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/.test(launch.npmPackage)) {
        return invalid(`launches[${i}].npmPackage`, "must be a bare npm package name without a version");
      }
    }
  }
  return null;
}

// ---- The UI folder (issue 11 item 3) ---------------------------------------------------------
// UI files are served to the browser without a credential, so the folder they come from must
// hold nothing else: not the app's data/ (written at run time by the backend), not the folders
// the installer writes or that hold code, and not the backend's own entry point.

/** Folders that may never be, or lie inside, the UI folder: written by the installer or holding code. */
export const NOT_UI_FOLDERS: ReadonlySet<string> = new Set(["data", "venv", ".venv", "node_modules", "wheels"]);

/** The folder holding the UI entry, with a trailing '/', e.g. "ui/" for "ui/index.html"; null without an entry. */
export function uiFolderOf(m: Pick<AppManifest, "ui">): string | null {
  const entry = m.ui?.entry;
  if (entry === undefined || !entry.includes("/")) return null;
  return entry.slice(0, entry.lastIndexOf("/") + 1);
}

function uiFolderRefusal(field: string, reason: string): ManifestRefusal {
  return refusal("manifest_ui_folder_invalid", field, { reason }, { field });
}

/** Refuses a UI entry at the bundle root, in or under data/ or an installer folder, or beside the backend's code. */
function checkUiFolder(m: AppManifest): ManifestRefusal | null {
  const entry = m.ui?.entry;
  if (entry === undefined) return null;
  const segments = entry.split("/");
  if (segments.some((s) => s === "" || s === "." || s.startsWith(".") || s.includes("\\"))) {
    return uiFolderRefusal(
      "ui.entry",
      `'${entry}' must be a plain relative path of names (no empty, '.', dot-file or backslash segments)`,
    );
  }
  if (segments.length < 2)
    return uiFolderRefusal("ui.entry", `'${entry}' is at the bundle root; put the UI in a sub-folder such as ui/`);
  const folderSegments = segments.slice(0, -1);
  const held = folderSegments.find((s) => NOT_UI_FOLDERS.has(s.toLowerCase()));
  if (held !== undefined)
    return uiFolderRefusal("ui.entry", `'${entry}' lies in ${held}/, which the installer writes or which holds code`);
  const folder = uiFolderOf(m)!;
  const inFolder = (p: string) =>
    p
      .replace(/^(\.\/)+/, "")
      .toLowerCase()
      .startsWith(folder.toLowerCase());
  if (m.backend?.entryPoint !== undefined && inFolder(m.backend.entryPoint)) {
    return uiFolderRefusal(
      "ui.entry",
      `the backend's entry point '${m.backend.entryPoint}' is inside the UI folder ${folder}`,
    );
  }
  const codeArg = (m.backend?.args ?? []).find(inFolder);
  if (codeArg !== undefined)
    return uiFolderRefusal("ui.entry", `the backend runs '${codeArg}', which is inside the UI folder ${folder}`);
  for (const [i, page] of (m.ui?.pages ?? []).entries()) {
    if (!page.entryPoint.startsWith(folder))
      return uiFolderRefusal(`ui.pages[${i}].entryPoint`, `'${page.entryPoint}' is outside the UI folder ${folder}`);
  }
  return null;
}

// ---- npm specifiers (issue 11 item 2) -------------------------------------------------------
// Only registry packages are installed: a name, optionally with an exact version or a semver
// range. Every other form npm reads (file:, link:, github:, git+..., URLs, tarball paths,
// npm: aliases, user/repo shorthands, dist-tags) names code the registry never vouched for.

const NPM_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const SEMVER_PART = "(?:0|[1-9]\\d*|[xX*])";
const SEMVER_VERSION = `v?${SEMVER_PART}(?:\\.${SEMVER_PART}){0,2}(?:-[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?`;
const COMPARATOR = new RegExp(`^(?:<=|>=|<|>|=|~|\\^)?${SEMVER_VERSION}$`);
const PLAIN_VERSION = new RegExp(`^${SEMVER_VERSION}$`);

/** True for a semver range as npm reads one: comparator sets joined by `||`, or `a - b`. */
export function isSemverRange(range: string): boolean {
  if (range.length === 0 || range.length > 256) return false;
  return range.split("||").every((set) => {
    const trimmed = set.trim();
    if (trimmed === "") return false;
    const hyphen = trimmed.split(" - ");
    if (hyphen.length === 2) return PLAIN_VERSION.test(hyphen[0]!.trim()) && PLAIN_VERSION.test(hyphen[1]!.trim());
    if (hyphen.length > 2) return false;
    return trimmed.split(/\s+/).every((comparator) => COMPARATOR.test(comparator));
  });
}

/** True only for `name`, `name@<version or range>`, `@scope/name` and `@scope/name@<version or range>`. */
export function isRegistryNpmSpec(spec: string): boolean {
  if (spec.length === 0 || spec.length > 300) return false;
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  const name = at === -1 ? spec : spec.slice(0, at);
  if (name.length > 214 || !NPM_NAME.test(name)) return false;
  // npm reads a name ending like an archive as a tarball path.
  if (/\.(tgz|tar|tar\.gz)$/i.test(name)) return false;
  return at === -1 || isSemverRange(spec.slice(at + 1));
}

/** The host and port of a remote MCP server's https URL; null when it is not one. */
export function mcpRemoteHost(url: string): { host: string; port: number } | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== "https:" || parsed.hostname === "" || parsed.username !== "" || parsed.password !== "")
    return null;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, "").toLowerCase(),
    port: parsed.port === "" ? 443 : Number(parsed.port),
  };
}
