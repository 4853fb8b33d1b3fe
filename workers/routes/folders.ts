// Folder grants (folder-grants.ts): the owner lists an app's folder needs, grants a chosen folder
// to one, or takes it back. Owner-only: an app's token reaches none of these, though it reaches
// its own /api/apps/<name>. The bridge checks a chosen folder where the files are; the record
// keeps the answer; every grant and revocation is a security-log row with the path; the running
// backend restarts at once with the new view, and running MCP servers end at their next
// liveness check (the stamp of their grants no longer matches), so the agent's next connect
// gets the new view.
import { appRegistry } from "../../durable/instances";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import { AppViewSchema, type AppRecord } from "../../kernel/contracts/app-record";
import {
  effectiveGrants,
  folderInside,
  FolderGrantRequestSchema,
  FolderGrantSchema,
  FolderListingSchema,
  type FolderAccess,
  type FolderGrant,
  type FolderListing,
} from "../../kernel/contracts/folder-grants";
import { requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { assertOwnerPresence } from "../guards/owner-presence";
import { route, type RouteRequest } from "../route-row";
import { withTransition } from "../lifecycle/transition-lock";

const Empty = z.object({}).strict();

/** How a grant's change reached the app's running processes. */
const AppliedSchema = z.strictObject({
  backend: z.enum(["restarted", "not_running", "restart_failed"]),
  mcp_servers: z.literal("end_at_next_check"),
});

function listing(record: AppRecord): FolderListing {
  const grants = effectiveGrants(record.manifest.permissions?.folders, record.folderGrants);
  return {
    app: record.name,
    folders: (record.manifest.permissions?.folders ?? []).map((need) => ({
      name: need.name,
      why: need.why,
      access: need.access,
      inside: folderInside(need.name),
      grant: grants.find((g) => g.need === need.name) ?? null,
    })),
  };
}

function declaredNeed(record: AppRecord, need: string): { name: string; access: FolderAccess } {
  const found = (record.manifest.permissions?.folders ?? []).find((n) => n.name === need);
  if (!found)
    throw new GatewayError("folder_need_not_declared", { vars: { name: record.name, need: need.slice(0, 64) } });
  return found;
}

/** The running backend restarts with the new view (under the app's transition lock); a stopped one sees it at its next start. */
async function applyToBackend(
  req: RouteRequest<unknown, unknown>,
  record: AppRecord,
): Promise<z.infer<typeof AppliedSchema>["backend"]> {
  const view = await appRegistry(req.env).get(record.name);
  if (!record.enabled || !record.manifest.backend || !view?.backend?.running) return "not_running";
  return withTransition(req, record.name, "folders", async () => {
    const restarted = await bridgeCall(
      req.env,
      "POST /backends/restart",
      { name: record.name, manifest: record.manifest, digest: record.consentDigest },
      60_000,
    ).catch((error: unknown) => ({ started: false, reason: error instanceof Error ? error.message : String(error) }));
    return restarted.started ? "restarted" : "restart_failed";
  });
}

export const folderRoutes = [
  route({
    method: "GET",
    path: "/api/apps/:name/folders",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "The app's folder needs (permissions.folders), each with what it may get at most, where it appears inside the sandbox, and the folder the owner granted to it, if any.",
    answer: { schema: FolderListingSchema },
    refuses: ["app_not_found"],
    async handle(req) {
      return listing(await requireRecord(req.env, req.params.name));
    },
  }),
  route({
    method: "PUT",
    path: "/api/apps/:name/folders/:need",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: FolderGrantRequestSchema,
    contract:
      'Grants a folder the owner chose to one of the app\'s declared needs, replacing an earlier one: `{"path": "/abs/folder"}` read-only, `"access": "read-write"` only when the need allows it (422 folder_grant_wider_than_need), `"whole_home": true` to grant a whole home folder on purpose. The bridge walks the path without following links and refuses `/`, system folders, the PersonalClaw home or anything in or holding it, links, a folder another user owns, and for a root gateway one its unprivileged children cannot use. Widens what third-party code sees, so it needs owner presence. A security-log row with the path; the running backend restarts at once, running MCP servers end at their next check.',
    answer: { schema: z.strictObject({ grant: FolderGrantSchema, applied: AppliedSchema, app: AppViewSchema }) },
    refuses: [
      "app_not_found",
      "folder_need_not_declared",
      "folder_grant_wider_than_need",
      "fresh_sign_in_required",
      "folder_path_invalid",
      "folder_path_missing",
      "folder_path_not_a_folder",
      "folder_path_link",
      "folder_path_refused",
      "folder_path_whole_home",
      "folder_path_not_owned",
      "folder_path_unreachable",
      "app_busy",
      "bridge_unavailable",
    ],
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      const need = declaredNeed(record, req.params.need);
      const access = req.body.access ?? "read";
      if (access === "read-write" && need.access !== "read-write")
        throw new GatewayError("folder_grant_wider_than_need", { vars: { need: need.name } });
      assertOwnerPresence(req);
      const wholeHome = req.body.whole_home === true;
      let resolved: { path: string };
      try {
        resolved = await bridgeCall(req.env, "POST /folders/resolve", { path: req.body.path, access, wholeHome });
      } catch (error) {
        if (error instanceof GatewayError && error.code.startsWith("folder_path_"))
          await req.audit({
            kind: "folder_grant_refused",
            outcome: "refused",
            subject: record.name,
            detail: { need: need.name, path: req.body.path.slice(0, 1024), code: error.code },
          });
        throw error;
      }
      const grant: FolderGrant = {
        need: need.name,
        path: resolved.path,
        access,
        grantedAt: new Date(req.now).toISOString(),
        ...(wholeHome ? { wholeHome: true } : {}),
      };
      const before = (record.folderGrants ?? []).find((g) => g.need === need.name) ?? null;
      await appRegistry(req.env).setFolderGrant(record.name, grant);
      await req.audit({
        kind: "folder_granted",
        outcome: "allowed",
        subject: record.name,
        detail: { need: need.name, path: grant.path, access, replaced: before?.path ?? null },
      });
      const backend = await applyToBackend(req, record);
      const app = (await appRegistry(req.env).get(record.name))!;
      return { grant, applied: { backend, mcp_servers: "end_at_next_check" as const }, app };
    },
  }),
  route({
    method: "DELETE",
    path: "/api/apps/:name/folders/:need",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract:
      "Takes back the folder granted to one need: a security-log row with the path; the running backend restarts at once without it, running MCP servers end at their next check. 404 folder_grant_not_found when none is granted.",
    answer: { schema: z.strictObject({ revoked: FolderGrantSchema, applied: AppliedSchema }) },
    refuses: ["app_not_found", "folder_grant_not_found", "app_busy", "bridge_unavailable"],
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      const need = req.params.need.slice(0, 64);
      const revoked = await appRegistry(req.env).revokeFolderGrant(record.name, need);
      if (!revoked) throw new GatewayError("folder_grant_not_found", { vars: { name: record.name, need } });
      await req.audit({
        kind: "folder_revoked",
        outcome: "allowed",
        subject: record.name,
        detail: { need: revoked.need, path: revoked.path, access: revoked.access },
      });
      const backend = await applyToBackend(req, record);
      return { revoked, applied: { backend, mcp_servers: "end_at_next_check" as const } };
    },
  }),
  route({
    method: "GET",
    path: "/api/internal/apps/:name/folders",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    contract:
      "The folders a start of the app's backend binds: the record's grants for the needs its manifest still declares, each narrowed to what the need allows. Asked by the bridge at every start.",
    answer: { schema: z.strictObject({ folders: z.array(FolderGrantSchema) }) },
    refuses: ["app_not_found"],
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      return { folders: effectiveGrants(record.manifest.permissions?.folders, record.folderGrants) };
    },
  }),
];
