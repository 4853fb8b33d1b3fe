// What each `user_config` field of an .mcpb bundle becomes in the generated app, given where its
// `mcp_config` names it (`${user_config.KEY}`) and what the owner gave with `--user-config`:
// - a `directory` field: a folder need the owner grants a folder to (`/folders/<need>` inside);
// - a `sensitive` field named as a whole env value: a write-only secret of the app (its name the
//   key in capitals), the env value `${secret:NAME}` (mcp-server-secrets.ts); the owner stores it
//   with `secrets set` and assigns it, and the server gets its value in that variable at its
//   start. Never on the command line: a value there would be written in app.json and shown in the
//   review. A sensitive field named in an argument or inside a longer value cannot be handed over
//   so: refused when required, left unset otherwise;
// - any other field: the owner's --user-config value, else its default, else unset (optional) or
//   refused (required); a `file` field is refused (a folder is granted, never one file).
import { GatewayError } from "../../kernel/contracts/errors";
import { folderInside, FOLDER_NEED_PATTERN } from "../../kernel/contracts/folder-grants";
import type { McpbBundleRecord } from "../../kernel/contracts/mcpb-bundle";
import { secretReference } from "../../kernel/contracts/mcp-server-secrets";
import { declaredSecretNameRefusal } from "../../kernel/contracts/secrets";
import type { McpbManifest, McpbUserConfigOption } from "./mcpb-manifest";

const USER_CONFIG = /\$\{user_config\.([^}]*)\}/g;
const WHOLE_USER_CONFIG = /^\$\{user_config\.([^}]*)\}$/;

/** The server's command line as the bundle gives it, before its variables are replaced. */
export type McpConfig = { command: string; args: string[]; env: Record<string, string> };
/** A field's value in the server's command line: a text, or nothing (an optional field left unset). */
export type Resolved = { value: string | null; becomes: string };
export type FolderNeed = { name: string; why: string; access: "read-write" };
/** A secret the generated app declares for a sensitive field. */
export type FieldSecret = { name: string; why: string };

/** Where the command line names a field: as a whole env value (the variables), or anywhere else. */
type Usage = { wholeEnv: string[]; elsewhere: boolean };

export const configRefused = (field: string, reason: string) =>
  new GatewayError("mcpb_user_config_refused", { vars: { field, reason } });

/** Where the command line names each field. */
function usagesOf(config: McpConfig): Map<string, Usage> {
  const usages = new Map<string, Usage>();
  const usage = (key: string) => {
    if (!usages.has(key)) usages.set(key, { wholeEnv: [], elsewhere: false });
    return usages.get(key)!;
  };
  for (const text of [config.command, ...config.args])
    for (const match of text.matchAll(USER_CONFIG)) usage(match[1]!).elsewhere = true;
  for (const [variable, text] of Object.entries(config.env)) {
    const whole = WHOLE_USER_CONFIG.exec(text);
    if (whole) usage(whole[1]!).wholeEnv.push(variable);
    else for (const match of text.matchAll(USER_CONFIG)) usage(match[1]!).elsewhere = true;
  }
  return usages;
}

/** The folder need a directory field becomes: its key in the need pattern's letters. */
function needNameOf(key: string): string {
  const name = key.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  if (!FOLDER_NEED_PATTERN.test(name)) throw configRefused(key, "no folder need name can be made of its key");
  return name;
}

/** The secret a sensitive field becomes: its key in capitals, `-` and `.` as `_`. */
export function secretNameOf(key: string): string {
  const name = key.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
  const why = declaredSecretNameRefusal(name);
  if (why) throw configRefused(key, `no secret name can be made of its key: '${name.slice(0, 64)}' ${why}`);
  return name;
}

function defaultText(value: NonNullable<McpbUserConfigOption["default"]>): string {
  return Array.isArray(value) ? value.join(",") : String(value);
}

/** The owner's --user-config value for a field, checked against its type and bounds. */
function givenValue(key: string, option: McpbUserConfigOption, given: string): Resolved {
  if (option.type === "directory")
    throw configRefused(key, "it is a folder: grant one with `personalclaw apps folders` once the app is installed");
  if (option.type === "number") {
    const number = Number(given);
    if (given.trim() === "" || !Number.isFinite(number)) throw configRefused(key, `'${given}' is not a number`);
    if ((option.min !== undefined && number < option.min) || (option.max !== undefined && number > option.max))
      throw configRefused(key, `${given} is outside ${option.min ?? "-inf"}..${option.max ?? "inf"}`);
  }
  if (option.type === "boolean" && given !== "true" && given !== "false")
    throw configRefused(key, `'${given}' is not true or false`);
  return { value: given, becomes: `${JSON.stringify(given)}, given with --user-config` };
}

/** A sensitive field: a secret of the app when named as a whole env value, else unset or refused. */
function sensitiveField(key: string, option: McpbUserConfigOption, usage: Usage, secrets: FieldSecret[]): Resolved {
  if (usage.elsewhere || usage.wholeEnv.length === 0) {
    const where =
      "the bundle puts it in its command line or inside a longer value, where it would be written in app.json";
    if (option.required === true) throw configRefused(key, `it is sensitive and ${where}`);
    return { value: null, becomes: `left unset: it is sensitive and ${where}` };
  }
  const name = secretNameOf(key);
  if (secrets.some((s) => s.name === name)) throw configRefused(key, `its secret '${name}' is named twice`);
  secrets.push({ name, why: `${option.title}: ${option.description}`.slice(0, 500) || key });
  return {
    value: secretReference(name),
    becomes: `the secret ${name} (in ${usage.wholeEnv.join(", ")}): store it with \`personalclaw secrets set ${name}\` and assign it to the app; the server gets its value in its environment at its start`,
  };
}

/** What one named field becomes; a field that cannot reach a confined server is refused with the reason. */
function resolveField(
  key: string,
  option: McpbUserConfigOption,
  usage: Usage,
  given: string | undefined,
  out: { needs: FolderNeed[]; secrets: FieldSecret[] },
): Resolved {
  if (option.type === "file")
    throw configRefused(key, "it asks for one file, and PersonalClaw grants folders, never a single file");
  if (option.sensitive === true) return sensitiveField(key, option, usage, out.secrets);
  if (given !== undefined) return givenValue(key, option, given);
  if (option.type === "directory") {
    const need = needNameOf(key);
    if (out.needs.some((n) => n.name === need)) throw configRefused(key, `its folder need '${need}' is named twice`);
    out.needs.push({
      name: need,
      why: `${option.title}: ${option.description}`.slice(0, 500) || key,
      access: "read-write",
    });
    return {
      value: folderInside(need),
      becomes: `the folder need '${need}': the folder you grant it (apps folders), seen at ${folderInside(need)}`,
    };
  }
  if (option.default !== undefined && !(Array.isArray(option.default) && option.default.length === 0)) {
    const value = defaultText(option.default);
    if (/\$\{/.test(value)) throw configRefused(key, "its default names a folder of yours (${...})");
    return { value, becomes: `${JSON.stringify(value)}, its default` };
  }
  if (option.required === true)
    throw configRefused(key, "it is required and has no default: give it with --user-config");
  return { value: null, becomes: "left unset: it is optional and has no default" };
}

/**
 * The owner's --user-config values by key: a field the bundle does not declare is refused, and
 * a sensitive one with mcpb_user_config_sensitive, before anything is made of it.
 */
function givenValues(manifest: McpbManifest, given: ReadonlyArray<[string, string]>): Map<string, string> {
  const declared = manifest.user_config ?? {};
  const values = new Map<string, string>();
  for (const [key, value] of given) {
    if (!Object.hasOwn(declared, key)) throw configRefused(key, "the bundle declares no such field");
    if (declared[key]!.sensitive === true) {
      let name = key.toUpperCase();
      try {
        name = secretNameOf(key);
      } catch {
        // The refusal below names the field either way.
      }
      throw new GatewayError("mcpb_user_config_sensitive", { vars: { field: key, name } });
    }
    if (values.has(key)) throw configRefused(key, "--user-config gives it twice");
    values.set(key, value);
  }
  return values;
}

/** Every declared field with what it becomes; the values of the named ones, the folder needs and the secrets. */
export function resolveUserConfig(
  manifest: McpbManifest,
  config: McpConfig,
  given: ReadonlyArray<[string, string]>,
): {
  values: Map<string, Resolved>;
  needs: FolderNeed[];
  secrets: FieldSecret[];
  uses: McpbBundleRecord["userConfig"];
} {
  const declared = manifest.user_config ?? {};
  const usages = usagesOf(config);
  const givenByKey = givenValues(manifest, given);
  for (const key of usages.keys())
    if (!Object.hasOwn(declared, key)) throw configRefused(key, "mcp_config names it and no field declares it");
  for (const key of givenByKey.keys())
    if (!usages.has(key)) throw configRefused(key, "the server's command line does not name it, so a value is unused");
  const values = new Map<string, Resolved>();
  const out = { needs: [] as FolderNeed[], secrets: [] as FieldSecret[] };
  const uses: McpbBundleRecord["userConfig"] = [];
  for (const [key, option] of Object.entries(declared).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const usage = usages.get(key);
    const resolved = usage ? resolveField(key, option, usage, givenByKey.get(key), out) : null;
    if (resolved) values.set(key, resolved);
    uses.push({
      key,
      type: `${option.type}${option.sensitive ? ", sensitive" : ""}${option.required ? ", required" : ""}`,
      title: option.title.slice(0, 500),
      becomes: (resolved?.becomes ?? "not used: the server's command line does not name it").slice(0, 1000),
    });
  }
  return { values, ...out, uses };
}

/** Whether `text` is exactly one field left unset: such an argument or variable is left out. */
export function isUnsetField(text: string, values: ReadonlyMap<string, Resolved>): boolean {
  const whole = WHOLE_USER_CONFIG.exec(text);
  return whole !== null && values.get(whole[1]!)?.value === null;
}

/** Parses `--user-config KEY=VALUE`: a user_config key as the MCPB manifest allows one, then `=`. */
export function parseUserConfigAssignment(
  text: string,
): { ok: true; value: [string, string] } | { ok: false; reason: string } {
  const eq = text.indexOf("=");
  const key = eq < 0 ? text : text.slice(0, eq);
  if (eq < 0 || !/^[A-Za-z0-9_.-]{1,128}$/.test(key))
    return { ok: false, reason: "is not KEY=VALUE (a user_config key, then =)" };
  const value = text.slice(eq + 1);
  if (value.length > 4096) return { ok: false, reason: "has a value longer than 4096 characters" };
  return { ok: true, value: [key, value] };
}
