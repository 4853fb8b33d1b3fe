// The app.json permissions: what an app may reach, each grant with the words the owner's review
// and the manifest reference show, and the grant rules a field-by-field schema cannot state.
import { z } from "zod";
import { FOLDER_NEED_PATTERN, FolderAccessSchema, folderEnvName } from "./folder-grants";
import { NetworkGrantSchema } from "../rules/network-grant";
import { settingAt } from "./owner-settings";
import { EVENT_CLASSES } from "../rules/event-names";
import { shortText, stringList } from "./manifest-field-shapes";
import { invalidField, refusal, type ManifestRefusal } from "./manifest-refusal";
import type { AppManifest } from "./manifest";

/** The event names an app may declare, as the manifest reference lists them. */
function declarableEventNames(): string {
  return Object.entries(EVENT_CLASSES)
    .filter(([, entry]) => entry.tier === "declarable")
    .map(([name]) => `\`${name}\``)
    .join(", ");
}

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
    hooks: z
      .boolean()
      .meta({
        description:
          "Whether the app's hooks (`setup.onInstall`, `setup.onUninstall`) also get the granted folder, at the same place and access. Nothing is granted before a first install, so an update's install hook and the uninstall hook are the ones that see it. Without it a hook never sees the folder; the installers of the app's packages never do.",
        owner: "Whether its hooks share the folder.",
        byDefault: "false",
      })
      .optional(),
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
        "Folders the app asks the owner for. The app sees nothing of the owner's files until the owner grants a folder to a need (`personalclaw apps folders`); the folder then appears, alone, at `/folders/<name>` in every process of the app (backend and MCP servers; its hooks only when the need says `hooks: true`; never the installers of its packages), read-only unless the need says `read-write` and the owner chose so.",
      owner: "Every need, its reason and its most access.",
      byDefault: "none",
      review: "Asks for folders you choose",
    })
    .optional(),
});

/** Two needs whose environment names collide (`a-b` and `a_b`) would name one variable twice. */
export function checkFolderNeedNames(m: AppManifest): ManifestRefusal | null {
  const folderEnvs = (m.permissions?.folders ?? []).map((need) => folderEnvName(need.name));
  if (new Set(folderEnvs).size !== folderEnvs.length)
    return invalidField("permissions.folders", "two folder needs have the same name (case and - or _ aside)");
  return null;
}

/** GRANT-01: only editable settings, and never a security one (refused at preview). */
export function checkConfigGrant(m: AppManifest): ManifestRefusal | null {
  const grant = m.permissions?.config;
  const grantFields: Array<[string, string]> = Array.isArray(grant)
    ? grant.map((path, i) => [`permissions.config[${i}]`, path])
    : [
        ...(grant?.read ?? []).map((path, i): [string, string] => [`permissions.config.read[${i}]`, path]),
        ...(grant?.write ?? []).map((path, i): [string, string] => [`permissions.config.write[${i}]`, path]),
      ];
  for (const [field, path] of grantFields) {
    const spec = settingAt(path);
    if (!spec) return invalidField(field, `'${path.slice(0, 128)}' is not an editable setting`);
    if (spec.security) return refusal("manifest_config_security", field, { path }, { field, path });
  }
  return null;
}
