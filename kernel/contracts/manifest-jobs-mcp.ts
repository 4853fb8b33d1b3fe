// The app.json parts that others start on the app's behalf: scheduled jobs (fired at its
// backend or as an agent prompt) and MCP servers (started for the agent, or remote), with the
// rules a field-by-field schema cannot state.
import { z } from "zod";
import { nextFireAfter, parseCronSchedule } from "../time/cron-schedule";
import { plainBackendPath, shortText } from "./manifest-field-shapes";
import { invalidField, type ManifestRefusal } from "./manifest-refusal";
import { checkServerSecrets } from "./mcp-server-secrets";
import type { AppManifest } from "./manifest";

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
      "Five cron fields (minute hour day-of-month month day-of-week), read in `timezone`; it must fire at least once. Across daylight saving, as cron does: a fixed time in the hour the clocks skip fires once, at the first minute after the jump; one in the hour that repeats fires once, at its first occurrence; a job every so many minutes or hours keeps the real clock. `personalclaw apps jobs APP --from TIME --count N` lists the next fires.",
    owner: "The schedule.",
  }),
  /** UTC (the default) or an IANA zone name such as Europe/Paris. */
  timezone: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: "An IANA zone name such as Europe/Paris.", owner: "The zone.", byDefault: "UTC" })
    .optional(),
  /** The path on the app's backend each fire POSTs to, signed like a proxied request (plain like the health path). */
  route: plainBackendPath
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
export const mcpServerName = z
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
      description:
        "Variables set for a stdio server, on top of the sandbox's allowlisted environment. A value written `${secret:NAME}` (the whole value) is the value of the secret NAME the app declares with delivery `env`: the server gets it in that variable at its start once the owner assigns the secret, and nothing before.",
      owner: "The names and values, and each secret a server holds (never its value).",
      byDefault: "none",
    })
    .optional(),
});

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

/**
 * A job fires a signed request at the app's backend: it needs the cron grant, a backend, a
 * route on it and a schedule that has a next fire (issue 20).
 */
export function checkJobRoutes(m: AppManifest): ManifestRefusal | null {
  for (const [i, job] of (m.crons ?? []).entries()) {
    if (job.route === undefined) {
      // The agent-prompt form (MAN-04): a job without a route fires an agent at the app's tier.
      if (m.permissions?.agent === undefined)
        return invalidField("crons", "scheduled jobs need permissions.agent (an agent tier)");
      continue;
    }
    if (m.permissions?.cron !== true)
      return invalidField(`crons[${i}]`, "a scheduled job needs permissions.cron: true");
    if (!m.backend)
      return invalidField(`crons[${i}].route`, "a job's route is on the app's backend, and the app declares none");
    const schedule = parseCronSchedule(job.schedule, job.timezone ?? "UTC");
    if (typeof schedule === "string") return invalidField(`crons[${i}].schedule`, schedule);
    if (nextFireAfter(schedule, Date.UTC(2000, 0, 1)) === null)
      return invalidField(`crons[${i}].schedule`, "the schedule never fires");
  }
  return null;
}

/** A job's name is sent as X-PersonalClaw-Job, so two jobs of one app never share one. */
export function checkJobNames(m: AppManifest): ManifestRefusal | null {
  const jobNames = (m.crons ?? []).map((j) => j.name);
  if (new Set(jobNames).size !== jobNames.length) return invalidField("crons", "two jobs have the same name");
  return null;
}

/** A stdio server has a command and no url; an http server has an https:// URL naming a host and no command; a secret it holds is declared (mcp-server-secrets.ts). */
export function checkMcpServers(m: AppManifest): ManifestRefusal | null {
  for (const [name, server] of Object.entries(m.mcpServers ?? {})) {
    const transport = server.transport ?? "stdio";
    if (transport === "stdio" && server.command === undefined)
      return invalidField(`mcpServers.${name}.command`, "a stdio server needs a command");
    if (transport === "stdio" && server.url !== undefined)
      return invalidField(`mcpServers.${name}.url`, "a stdio server has no url");
    if (transport === "http") {
      if (server.command !== undefined || server.args !== undefined)
        return invalidField(`mcpServers.${name}.command`, "an http server has a url, not a command");
      if (mcpRemoteHost(server.url ?? "") === null)
        return invalidField(`mcpServers.${name}.url`, "an http server needs an https:// URL naming a host");
    }
  }
  return checkServerSecrets(m);
}
