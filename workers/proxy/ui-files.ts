// An app's UI (UI-*): `/apps/<name>/` serves the declared entry and `/apps/<name>/<file>`
// the files beside it, read through a read-only disk service over the apps folder that
// hides dot files (so never `.app_secret`). Only the entry's own folder is served: not the
// backend's code, not data/. Every answer says no-cache, nosniff and the sandboxing CSP.
import { GatewayError } from "../contracts/errors";
import type { AppRecord } from "../contracts/app-record";
import type { Env } from "../env";
import { contentTypeOf } from "../routes/content-type";
import { isAmbiguousPath } from "./app-target";
import { SANDBOXED_UI_CSP } from "./sandboxed-ui";


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
      "Content-Security-Policy": SANDBOXED_UI_CSP,
      // The sandboxed page's module scripts are fetched in CORS mode from its opaque origin.
      "Access-Control-Allow-Origin": "*",
      "Referrer-Policy": "no-referrer",
      ETag: `"${record.uiRevision ?? "none"}"`,
      "X-PersonalClaw-UI-Revision": record.uiRevision ?? "",
    },
  });
}
