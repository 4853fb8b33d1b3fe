// An app's UI (UI-*, issue 11 item 3): `/apps/<name>/` serves the declared entry and
// `/apps/<name>/<file>` the files beside it. Only files of the declared UI folder are served,
// and only with the bytes the host bridge listed from the installed copy just before it moved
// into place (AppRecord.uiFiles): the read-only disk service over <home>/apps follows links
// (docs/design/sandbox-ui-files.md), so whatever a path resolves to on disk is checked against
// that list, and a file that is not in it, or whose bytes changed, is the one 404. Nothing
// under data/ or outside the UI folder is ever in the list. Every answer says no-cache,
// nosniff and the sandboxing CSP; the only CORS answer names the sandboxed page's opaque origin.
import { GatewayError } from "../../kernel/contracts/errors";
import { sha256Hex } from "../../kernel/crypto/hex";
import type { AppRecord } from "../../kernel/contracts/app-record";
import { uiFolderOf } from "../../kernel/contracts/manifest";
import type { Env } from "../../durable/env";
import { contentTypeOf } from "../content-type";
import { isAmbiguousPath } from "./app-target";
import { SANDBOXED_UI_CSP, allowSandboxedUi } from "./sandboxed-ui";
import { publicOriginOf } from "../guards/public-origin";
import { readAppFileOverLink } from "./link-relay";

// Fetch destinations that load a page (a document or a frame), not a subresource of one.
const PAGE_DESTINATIONS = new Set(["document", "iframe", "frame", "embed", "object", "fencedframe"]);

/**
 * Refuses what a browser marks as coming from another site, except the app's own sandboxed
 * page: its origin is opaque, so Chromium marks its own script, style, image and fetch
 * requests `Sec-Fetch-Site: cross-site` too (CORS requests with `Origin: null`). What is
 * refused: another site navigating to or framing a UI file, and any CORS read by a real
 * origin. A request with no Sec-Fetch-Site was not marked by a browser.
 */
export function refuseCrossSite(request: Request): void {
  const site = request.headers.get("sec-fetch-site");
  if (site !== "cross-site" && site !== "same-site") return;
  const mode = request.headers.get("sec-fetch-mode");
  const dest = request.headers.get("sec-fetch-dest") ?? "";
  const origin = request.headers.get("origin");
  if (
    mode === "navigate" ||
    mode === "nested-navigate" ||
    PAGE_DESTINATIONS.has(dest) ||
    (origin !== null && origin !== "null")
  ) {
    throw new GatewayError("origin_not_allowed");
  }
}

/** The path inside the UI folder that `pathname` names, or null when it names nothing servable. */
function fileInUiFolder(record: AppRecord, pathname: string): { folder: string; file: string } | null {
  const entry = record.manifest.ui?.entry;
  const folder = uiFolderOf(record.manifest);
  const prefix = `/apps/${record.name}/`;
  // The URL parser resolves a percent-encoded dot segment before routing, so the path may no
  // longer be under this app at all: only a path that still is names one of its files.
  if (!entry || folder === null || isAmbiguousPath(pathname) || !pathname.startsWith(prefix)) return null;
  const rest = pathname.slice(prefix.length);
  let file: string;
  try {
    file = rest === "" ? entry.slice(folder.length) : rest.split("/").map(decodeURIComponent).join("/");
  } catch {
    return null;
  }
  if (
    file
      .split("/")
      .some((segment) => segment === "" || segment.startsWith(".") || segment.includes("\\") || segment.includes("\0"))
  )
    return null;
  return { folder, file };
}

/** Serves one UI file of `record`: in its UI folder, listed at install, with the listed bytes. */
export async function serveUiFile(env: Env, record: AppRecord, pathname: string, request: Request): Promise<Response> {
  refuseCrossSite(request);
  const notFound = () =>
    new GatewayError("app_ui_not_found", { vars: { name: record.name, path: pathname.slice(0, 300) } });
  const rawPath = request.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").split("?")[0]!;
  const target = isAmbiguousPath(rawPath) ? null : fileInUiFolder(record, pathname);
  const expected = target ? record.uiFiles?.[target.file] : undefined;
  if (!target || expected === undefined) throw notFound();
  const diskPath = `${target.folder}${target.file}`.split("/").map(encodeURIComponent).join("/");
  // At the edge the installed copy is on the paired machine: the same bytes come over its link.
  const answer =
    publicOriginOf(env).mode === "edge"
      ? await readAppFileOverLink(env, record.name, diskPath)
      : await env.APP_FILES.fetch(new Request(`http://app-files/${record.name}/${diskPath}`));
  if (!answer.ok) throw notFound();
  const bytes = await answer.arrayBuffer();
  // The disk service follows links: bytes that are not the listed ones mean this path now
  // resolves to something else, and nothing else is ever served.
  if ((await sha256Hex(new Uint8Array(bytes))) !== expected) throw notFound();
  const headers = new Headers({
    "Content-Type": contentTypeOf(target.file),
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": SANDBOXED_UI_CSP,
    "Referrer-Policy": "no-referrer",
    ETag: `"${record.uiRevision ?? "none"}"`,
    "X-PersonalClaw-UI-Revision": record.uiRevision ?? "",
    Vary: "Origin",
  });
  // The sandboxed page's module scripts and fetches are CORS requests from its opaque origin.
  allowSandboxedUi(request.headers.get("origin"), headers);
  return new Response(bytes, { status: 200, headers });
}
