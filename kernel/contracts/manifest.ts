// The app.json contract, shared by the gateway, the host bridge and the CLI. An app's manifest
// is written by whoever wrote the app: every field is parsed strictly, a boolean is JSON
// true/false and a list is a list (never coerced: iterating "*" as characters would widen a
// grant), and unknown top-level keys are kept for display but never trusted.
// This module is the contract's one import point: the whole schema and validateManifest, which
// runs every part's rules in one order. Each part (manifest-*.ts) keeps its fields beside the
// rules a field-by-field schema cannot state.
import { z } from "zod";
import { AppNameSchema } from "../rules/app-name";
import { resourcePath, shortText } from "./manifest-field-shapes";
import { refusal, type ManifestRefusal } from "./manifest-refusal";
import { BackendSchema, checkUiFolder, SetupSchema, UiSchema } from "./manifest-backend-ui";
import { checkConfigGrant, checkFolderNeedNames, PermissionsSchema } from "./manifest-permissions";
import {
  checkJobNames,
  checkJobRoutes,
  checkMcpServers,
  CronSchema,
  mcpServerName,
  McpServerSchema,
} from "./manifest-jobs-mcp";
import { checkNpmPackages, DependenciesSchema } from "./manifest-dependencies";
import {
  checkDeclaredSecrets,
  checkNpxLaunches,
  DeclaredSecretSchema,
  ExternalWriteSchema,
  LaunchedProgramSchema,
  PrerequisiteSchema,
} from "./manifest-disclosures";
import { checkCoreCompatibility } from "./manifest-versions";

// What other code reads of the contract's parts, through this one import point.
export {
  BACKEND_RESPONSE_TIMEOUT_CEILING_S,
  BACKEND_RESPONSE_TIMEOUT_DEFAULT_S,
  uiFolderOf,
} from "./manifest-backend-ui";
export { ConfigGrantSchema, configGrantPaths, PermissionsSchema } from "./manifest-permissions";
export { JOB_TIMEOUT_DEFAULT_S, mcpRemoteHost } from "./manifest-jobs-mcp";
export type { ManifestRefusal } from "./manifest-refusal";

export const AppManifestSchema = z.looseObject({
  // Declared so an editor's "$schema" is a field of the manifest, not an unknown key shown to the owner.
  $schema: z
    .string()
    .max(2048)
    .meta({
      description:
        "Where an editor finds the JSON Schema of app.json, e.g. a relative path to `docs/app.schema.json` of this package. The gateway ignores it.",
    })
    .optional(),
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
        "Secrets the app asks the owner for. Nothing arrives until the owner stores one and assigns it to the app; it then reaches the backend as the environment variable `name` at its next start (and a stdio MCP server whose `env` names `${secret:NAME}`, in that variable), masked in its log: the value itself, or a placeholder its egress broker replaces on the way to the origins `use` names (`delivery`).",
      owner: "Every name, reason, origin and who holds the value.",
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

export type ManifestValidation = { ok: true; manifest: AppManifest } | ManifestRefusal;

export interface ValidateManifestOptions {
  reservedNames: ReadonlySet<string>;
  /** True only for the package's own native folder (MAN-03). */
  fromNativeFolder: boolean;
  core: { version: string; features: readonly string[] };
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

/** Rules a field-by-field schema cannot state (MAN-04, MAN-07), each kept beside its part; the first refusal wins. */
function checkSemanticRules(m: AppManifest): ManifestRefusal | null {
  return (
    checkJobRoutes(m) ??
    checkFolderNeedNames(m) ??
    checkJobNames(m) ??
    checkMcpServers(m) ??
    checkConfigGrant(m) ??
    checkDeclaredSecrets(m) ??
    checkNpmPackages(m) ??
    checkNpxLaunches(m)
  );
}
