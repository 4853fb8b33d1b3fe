// Backup of the whole gateway (docs/backup-and-restore.md): the owner, present, asks for one
// archive sealed to a passphrase; the host bridge writes it from every Durable Object's
// consistent export (the internal row below, which only the bridge reaches) and the home's
// files, and its bytes stream back. No app reaches either row: the first is owner-only, the
// second internal-only. The passphrase passes through this worker on its way to the bridge only.
import { z } from "zod";
import { approvalStore, appRegistry, eventHub, securityLog, sessionStore } from "../../durable/instances";
import {
  BackupRequestSchema,
  GatewayStateExportSchema,
  PackagesOutcomeSchema,
} from "../../kernel/contracts/durability";
import { bridgeCall, bridgeStream } from "../bridge-client";
import { assertOwnerPresence } from "../guards/owner-presence";
import { route } from "../route-row";
import { mergeArchivedApp } from "../lifecycle/merge-from-backup";

const AnyObject = z.record(z.string(), z.unknown());
const MergeBody = z.strictObject({
  apps: z.array(z.strictObject({ record: AnyObject, config: AnyObject.nullable() })).max(500),
});
const MergeAnswer = z.strictObject({
  apps: z.array(z.strictObject({ name: z.string(), outcome: z.enum(["merged", "unchanged"]), why: z.string() })),
});

const PackagesAnswer = z.strictObject({ apps: z.array(PackagesOutcomeSchema) });

/** Installs of several apps' packages, one after the other, each bounded by the installer's own 10 minutes. */
const PACKAGES_TIMEOUT_MS = 60 * 60 * 1000;

/** A backup of a large home takes minutes (a 50 MB database is sealed in seconds; the bound is for slow disks). */
const BACKUP_TIMEOUT_MS = 60 * 60 * 1000;

export const durabilityRoutes = [
  route({
    method: "POST",
    path: "/api/durability/backup",
    family: "durability",
    authz: { kind: "owner" },
    internal: true,
    body: BackupRequestSchema,
    contract:
      'Writes one archive of the whole gateway from {"passphrase": "..."} (8 to 1024 characters; never stored) and answers its bytes: every Durable Object\'s consistent export, each app\'s installed bytes and data/ (SQLite through the online backup API), settings and secrets, every part sealed to the passphrase (scrypt, AES-256-GCM); the manifest lists each part with its size and SHA-256, is bound to the security log\'s head and signed with its checkpoint key. Needs owner presence (a sign-in within 10 minutes, or the local secret from this machine): 401 fresh_sign_in_required.',
    answer: { streamed: 'the archive\'s bytes, application/octet-stream (docs/backup-and-restore.md, "The archive")' },
    refuses: ["fresh_sign_in_required", "bridge_unavailable", "storage_full"],
    async handle(req) {
      assertOwnerPresence(req);
      // The row precedes the export, so the archive holds the record of its own making.
      await req.audit({ kind: "backup_started", outcome: "allowed", subject: "gateway" });
      const answer = await bridgeStream(
        req.env,
        "POST /durability/backup",
        { passphrase: req.body.passphrase },
        BACKUP_TIMEOUT_MS,
      );
      const headers = new Headers({
        "Content-Type": "application/octet-stream",
        "Content-Disposition": 'attachment; filename="personalclaw.pcbackup"',
        "Cache-Control": "no-store",
      });
      const length = answer.headers.get("content-length");
      if (length !== null) headers.set("Content-Length", length);
      return new Response(answer.body, { status: 200, headers });
    },
  }),
  route({
    method: "POST",
    path: "/api/durability/merge",
    family: "durability",
    authz: { kind: "owner" },
    internal: true,
    body: MergeBody,
    contract:
      "A merge restore's records (`personalclaw restore --mode merge`, which first puts each app's archived bytes and data/ in place): each archived app record is added as it was consented to unless this home has the name, its config written, its backend started, its MCP servers and jobs registered; answers each app `merged` or `unchanged` with why. Needs owner presence: 401 fresh_sign_in_required.",
    answer: { schema: MergeAnswer },
    refuses: ["fresh_sign_in_required", "bridge_unavailable"],
    async handle(req) {
      assertOwnerPresence(req);
      const apps = [];
      for (const app of req.body.apps) apps.push(await mergeArchivedApp(req, app));
      return { apps } satisfies z.input<typeof MergeAnswer>;
    },
  }),
  route({
    method: "POST",
    path: "/api/durability/packages",
    family: "durability",
    authz: { kind: "owner" },
    internal: true,
    body: z.strictObject({}),
    contract:
      "A merge restore's packages step (`personalclaw restore --mode merge`, after its records): the host bridge installs now, confined, the packages of every app restore-packages.json lists — from the pinned wheels or npm tarballs the archive carried (hashes checked), else from the registry they were pinned from — and starts each enabled app whose packages are in; an app that fails keeps its entry with the failure's code, has nothing half installed and stays stopped (packages_not_restored). Answers each app's outcome. Needs owner presence: 401 fresh_sign_in_required.",
    answer: { schema: PackagesAnswer },
    refuses: ["fresh_sign_in_required", "bridge_unavailable"],
    async handle(req) {
      assertOwnerPresence(req);
      return await bridgeCall(req.env, "POST /durability/packages", {}, PACKAGES_TIMEOUT_MS);
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/durability/export",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: z.strictObject({}),
    contract:
      "The host bridge reads every Durable Object's consistent export for a backup: each object's tables and rows read in one pass, and the security log's head and the checkpoint covering it (signed now when rows came after the last, hence a POST).",
    answer: { schema: GatewayStateExportSchema },
    refuses: [],
    async handle({ env }) {
      // The log last: every row the other objects' state led to is already in it.
      const [sessions, apps, approvals, events] = await Promise.all([
        sessionStore(env).exportState(),
        appRegistry(env).exportState(),
        approvalStore(env).exportState(),
        eventHub(env).exportState(),
      ]);
      const log = await securityLog(env).exportState();
      return {
        stores: {
          SessionStore: sessions,
          AppRegistry: apps,
          ApprovalStore: approvals,
          EventHub: events,
          SecurityLog: log,
        },
      } satisfies z.input<typeof GatewayStateExportSchema>;
    },
  }),
];
