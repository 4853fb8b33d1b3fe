// An app's UI (UI-*): `/apps/<name>/` serves the declared entry and `/apps/<name>/<file>`
// the files beside it, read through a read-only disk service over the apps folder that
// hides dot files (so never `.app_secret`). Only the entry's own folder is served: not the
// backend's code, not data/. Every answer says no-cache, nosniff and a CSP that keeps the
// page to its own files and the gateway's API.
import { GatewayError } from "../contracts/errors";
import type { AppRecord } from "../contracts/app-record";
import type { Env } from "../env";
import { contentTypeOf } from "../routes/content-type";
import { isAmbiguousPath } from "./app-target";

const UI_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'";

/** Serves one declared UI file of `record`. */
export async function serveUiFile(env: Env, record: AppRecord, pathname: string): Promise<Response> {
  const entry = record.manifest.ui?.entry;
  const rest = pathname.slice(`/apps/${record.name}/`.length);
  if (!entry || isAmbiguousPath(pathname)) throw new GatewayError("app_ui_not_found", { vars: { name: record.name, path: pathname } });
  const folder = entry.includes("/") ? entry.slice(0, entry.lastIndexOf("/") + 1) : "";
  const file = rest === "" ? entry : `${folder}${rest}`;
  if (file.split("/").some((segment) => segment === "" || segment.startsWith("."))) {
    throw new GatewayError("app_ui_not_found", { vars: { name: record.name, path: pathname } });
  }
  const answer = await env.APP_FILES.fetch(new Request(`http://app-files/${record.name}/${file}`));
  if (!answer.ok) throw new GatewayError("app_ui_not_found", { vars: { name: record.name, path: pathname } });
  return new Response(answer.body, {
    status: 200,
    headers: {
      "Content-Type": contentTypeOf(file),
      "Cache-Control": "no-cache",
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": UI_CSP,
      "Referrer-Policy": "no-referrer",
      ETag: `"${record.uiRevision ?? "none"}"`,
      "X-PersonalClaw-UI-Revision": record.uiRevision ?? "",
    },
  });
}
