// `personalclaw apps folders <app> [set <need> <path> | revoke <need>]`: the owner's folder grants
// from the terminal, through the same owner-only routes as the dashboard. A grant widens what
// third-party code sees, so it is sent with the local secret's proof that the owner is present.
// The path is sent as typed (made absolute against the current folder); the bridge, not the
// CLI, decides whether it may be granted.
import { resolve } from "node:path";
import { z } from "zod";
import { callGateway, parseAnswer } from "./gateway-client";
import { printRefusal } from "./print";
import { UsageError } from "./usage-error";
import { safeLine } from "../../kernel/text/text-safety";
import { FolderGrantSchema, FolderListingSchema } from "../../kernel/contracts/folder-grants";

const WORDS = ["apps", "folders"] as const;
const Applied = z.object({ backend: z.string(), mcp_servers: z.string() }).passthrough();
const Granted = z.object({ grant: FolderGrantSchema, applied: Applied }).passthrough();
const Revoked = z.object({ revoked: FolderGrantSchema, applied: Applied }).passthrough();

function appliedText(applied: z.infer<typeof Applied>): string {
  const backend =
    applied.backend === "restarted"
      ? "its backend restarted with the new view"
      : applied.backend === "restart_failed"
        ? "its backend did not restart: see `personalclaw apps list`"
        : "it sees the change at its next start";
  return `${backend}; its running MCP servers end within seconds and start again with the new view`;
}

async function list(home: string, app: string, json: boolean): Promise<number> {
  const path = `/api/apps/${encodeURIComponent(app)}/folders`;
  const parsed = parseAnswer(await callGateway(home, "apps-folders", "GET", path), FolderListingSchema);
  if (!parsed.ok) return printRefusal(parsed.answer, json);
  if (json) {
    process.stdout.write(`${JSON.stringify(parsed.body)}\n`);
    return 0;
  }
  if (parsed.body.folders.length === 0) process.stdout.write(`${safeLine(app)} asks for no folders.\n`);
  for (const need of parsed.body.folders) {
    const granted = need.grant
      ? `${safeLine(need.grant.path)} (${need.grant.access === "read-write" ? "read-write" : "read-only"})`
      : "not granted";
    process.stdout.write(
      `${safeLine(need.name)} at ${safeLine(need.inside)}: ${granted}\n  asks ${need.access}: ${safeLine(need.why)}\n`,
    );
  }
  return 0;
}

async function set(
  home: string,
  app: string,
  need: string,
  folder: string,
  flags: { json?: boolean; readWrite?: boolean; wholeHome?: boolean },
): Promise<number> {
  const json = Boolean(flags.json);
  const body = {
    path: resolve(folder),
    access: flags.readWrite ? "read-write" : "read",
    ...(flags.wholeHome ? { whole_home: true } : {}),
  };
  const path = `/api/apps/${encodeURIComponent(app)}/folders/${encodeURIComponent(need)}`;
  const answer = await callGateway(home, "apps-folders-set", "PUT", path, body, { provePresence: true });
  const parsed = parseAnswer(answer, Granted);
  if (!parsed.ok) return printRefusal(parsed.answer, json);
  if (json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else
    process.stdout.write(
      `${safeLine(app)} sees ${safeLine(parsed.body.grant.path)} at /folders/${safeLine(need)}, ${parsed.body.grant.access === "read-write" ? "read-write" : "read-only"}; ${appliedText(parsed.body.applied)}.\n`,
    );
  return 0;
}

async function revoke(home: string, app: string, need: string, json: boolean): Promise<number> {
  const path = `/api/apps/${encodeURIComponent(app)}/folders/${encodeURIComponent(need)}`;
  const answer = await callGateway(home, "apps-folders-revoke", "DELETE", path, {});
  const parsed = parseAnswer(answer, Revoked);
  if (!parsed.ok) return printRefusal(parsed.answer, json);
  if (json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else
    process.stdout.write(
      `${safeLine(app)} no longer sees ${safeLine(parsed.body.revoked.path)}; ${appliedText(parsed.body.applied)}.\n`,
    );
  return 0;
}

/** The one handler of the `apps folders` row: its optional words say which of the three it is. */
export async function runAppsFolders(
  home: string,
  args: readonly string[],
  flags: { json?: boolean; readWrite?: boolean; wholeHome?: boolean },
): Promise<number> {
  const [app, action, need, folder] = args as [string, string | undefined, string | undefined, string | undefined];
  const json = Boolean(flags.json);
  if (action === undefined) return list(home, app, json);
  if (action === "set" && need !== undefined && folder !== undefined) return set(home, app, need, folder, flags);
  if (action === "revoke" && need !== undefined && folder === undefined) return revoke(home, app, need, json);
  throw new UsageError("use 'apps folders APP', 'apps folders APP set NEED PATH' or 'apps folders APP revoke NEED'", [
    ...WORDS,
  ]);
}
