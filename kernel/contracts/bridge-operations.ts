// The one contract of the inner boundary: every operation the gateway calls on the host
// bridge, and every internal gateway route the bridge calls back, with its request and answer
// schemas. The worker's bridgeCall and the bridge's operation registry are both typed from
// BRIDGE_OPERATIONS, so an operation cannot exist on one side only; the side that receives a
// message parses it (the bridge its requests, the worker its answers). Imports nothing but zod
// and its sibling contracts.
import { z } from "zod";
import { APP_NAME_PATTERN } from "../rules/app-name";
import { AppLogAnswerSchema, AppLogRequestSchema } from "./app-log";
import { BackendStatusSchema, UiFilesSchema } from "./app-record";
import { FileChangesSchema, InstallReviewSchema, ReviewChangeSchema } from "./install-review";
import { McpRegistrationSchema } from "./mcp";
import { FolderGrantSchema, FolderResolvedSchema, FolderResolveRequestSchema } from "./folder-grants";
import { SettingWriteSchema, SettingWrittenSchema, SettingsDocumentSchema } from "./owner-settings";
import { ParkedDataViewSchema } from "./parked-data";
import {
  RegistryListingRequestSchema,
  RegistryListingSchema,
  SourceCheckRequestSchema,
  SourceChecksSchema,
  SourceStageRequestSchema,
  SourceStagedSchema,
} from "./package-sources";
import {
  SecretAssignRequestSchema,
  SecretDeleteRequestSchema,
  SecretListingSchema,
  SecretRebindRequestSchema,
  SecretStoreRequestSchema,
  SecretUnassignRequestSchema,
} from "./secrets";
import { BackupRequestSchema, GatewayStateExportSchema, PackagesOutcomeSchema } from "./durability";
import { AppendResultSchema, SecurityEventInputSchema, SecurityLogAnchorSchema } from "./security-event";

const AnyObject = z.record(z.string(), z.unknown());
const Source = z.string().min(1).max(4096);
const Digest = z.string().max(200);
const InstallId = z.string().max(100);
const NoBody = z.undefined();
const Empty = z.object({}).strict();
const NameRequest = z.object({ name: z.string().regex(APP_NAME_PATTERN) });

// The consent digest binds the app's secrets to this install: without it none is opened.
const BackendStartRequest = NameRequest.extend({ manifest: AnyObject, digest: Digest.optional() });
const BackendStarted = z.object({ started: z.boolean(), reason: z.string().optional(), code: z.string().optional() });
/** The installed copy an update replaces, and comes back to when the gateway cannot record the update. */
const InstalledCopy = z.object({
  manifest: AnyObject,
  review: AnyObject.nullable(),
  digest: Digest,
  enabled: z.boolean(),
});
const Undone = z.object({ undone: z.literal(true) });

/** One contract row: what the caller sends and what it gets back. */
interface OperationContract {
  method: "GET" | "POST";
  request: z.ZodType;
  answer: z.ZodType;
}

/** The bridge's operations, keyed "METHOD /path" as the bridge matches them (whole, INT-03). */
/** What an update that passed its health gate brings: what the gateway records. */
export const UpdatedAppSchema = z.object({
  manifest: AnyObject,
  review: InstallReviewSchema,
  digest: z.string(),
  uiFiles: UiFilesSchema,
  changes: z.array(ReviewChangeSchema),
  venvMoved: z.boolean(),
});

/**
 * An update the bridge finished, kept in its journal until the gateway has recorded it: with
 * it the gateway can record the update itself when the request that asked for it is gone.
 */
export const ReadyUpdateSchema = UpdatedAppSchema.extend({ source: Source, previousManifest: AnyObject });
export type ReadyUpdate = z.output<typeof ReadyUpdateSchema>;

export const BRIDGE_OPERATIONS = {
  "GET /sel/anchor": { method: "GET", request: NoBody, answer: SecurityLogAnchorSchema.nullable() },
  // With installedReview (the record's, which may predate this schema), previewed as an update: what changes against the review the owner consented to.
  // With installedName too, its files are compared with the installed copy's (`files`).
  "POST /apps/preview": {
    method: "POST",
    request: z.object({
      source: Source,
      installedReview: AnyObject.nullable().optional(),
      installedName: z.string().regex(APP_NAME_PATTERN).optional(),
    }),
    answer: z.object({
      review: InstallReviewSchema,
      digest: z.string(),
      changes: z.array(ReviewChangeSchema).optional(),
      consentNeeded: z.boolean().optional(),
      files: FileChangesSchema.optional(),
    }),
  },
  "POST /apps/install": {
    method: "POST",
    request: z.object({
      source: Source,
      consent: Digest.optional(),
      takenNames: z.array(z.string()).max(10_000),
      installId: InstallId.optional(),
      adoptData: z.boolean().optional(),
    }),
    answer: z.object({
      manifest: AnyObject,
      review: InstallReviewSchema,
      digest: z.string(),
      uiFiles: UiFilesSchema,
      adoptedData: ParkedDataViewSchema.nullable(),
    }),
  },
  // The gateway could not record an install that moved into place: undo it, freeing the name.
  "POST /apps/install-undo": {
    method: "POST",
    request: NameRequest.extend({ adoptedData: ParkedDataViewSchema.nullable() }),
    answer: Undone,
  },
  // The gateway recorded the transition: its journal (and an update's kept old version) go.
  "POST /apps/transition-commit": {
    method: "POST",
    request: NameRequest,
    answer: z.object({ committed: z.literal(true) }),
  },
  "POST /apps/update": {
    method: "POST",
    request: NameRequest.extend({
      source: Source,
      consent: Digest.optional(),
      installed: InstalledCopy,
      installId: InstallId.optional(),
    }),
    answer: UpdatedAppSchema,
  },
  // The gateway could not record an update that swapped: the old version comes back.
  "POST /apps/update-undo": {
    method: "POST",
    request: NameRequest.extend({ installed: InstalledCopy }),
    answer: Undone,
  },
  "POST /apps/parked": {
    method: "POST",
    request: NoBody,
    answer: z.object({ parked: z.array(ParkedDataViewSchema) }),
  },
  "POST /apps/parked/purge": { method: "POST", request: NameRequest, answer: z.object({ purged: z.string() }) },
  // The last lines of an app backend's log, masked, for the dashboard's app page.
  "POST /apps/logs": { method: "POST", request: AppLogRequestSchema, answer: AppLogAnswerSchema },
  // Proof by path and digest that this start itself staged the app from the package's own apps/native/.
  "POST /apps/native/verify": {
    method: "POST",
    request: z.object({ source: Source, digest: Digest }),
    answer: z.object({ manifest: AnyObject, digest: z.string(), uiFiles: UiFilesSchema }),
  },
  "POST /apps/install-progress": {
    method: "POST",
    request: z.object({ id: InstallId }),
    answer: z.object({ steps: z.array(AnyObject).nullable() }),
  },
  "POST /apps/remove": {
    method: "POST",
    request: NameRequest.extend({
      purgeData: z.boolean(),
      manifest: AnyObject.optional(),
      version: z.string().max(64),
      consentDigest: Digest,
      installId: InstallId.optional(),
    }),
    answer: z.object({
      removed: z.literal(true),
      uninstallHook: z.string().nullable(),
      /** The assignments its sealed copies held, taken back with it; the owner's stored secrets stay. */
      secretsTakenBack: z.array(z.object({ as: z.string(), secret: z.string().nullable() })),
    }),
  },
  // <home>/mcp.json: the gateway names the app and its manifest; the bridge writes exactly the entries it declares.
  "POST /mcp/register": {
    method: "POST",
    request: NameRequest.extend({
      manifest: AnyObject,
      off: z.array(z.string().max(64)).max(512),
      previousManifest: AnyObject.optional(),
    }),
    answer: McpRegistrationSchema,
  },
  "POST /mcp/deregister": {
    method: "POST",
    request: NameRequest.extend({ manifest: AnyObject }),
    answer: McpRegistrationSchema,
  },
  "POST /mcp/flag": {
    method: "POST",
    request: z.object({ key: z.string().min(3).max(140), enabled: z.boolean() }),
    answer: z.object({ key: z.string(), present: z.boolean() }),
  },
  "POST /backends/start": { method: "POST", request: BackendStartRequest, answer: BackendStarted },
  "POST /backends/restart": { method: "POST", request: BackendStartRequest, answer: BackendStarted },
  "POST /backends/stop": { method: "POST", request: NameRequest, answer: z.object({ stopped: z.literal(true) }) },
  // A folder the owner chose for an app: the bridge walks it without following links and answers its real path, or refuses.
  "POST /folders/resolve": { method: "POST", request: FolderResolveRequestSchema, answer: FolderResolvedSchema },
  // Package sources for the dashboard: a spec generated into the quarantine as `apps add` does, a
  // page of a configured MCP Registry, and what each installed app's source offers now.
  "POST /sources/stage": { method: "POST", request: SourceStageRequestSchema, answer: SourceStagedSchema },
  "POST /sources/registry": { method: "POST", request: RegistryListingRequestSchema, answer: RegistryListingSchema },
  "POST /sources/check": { method: "POST", request: SourceCheckRequestSchema, answer: SourceChecksSchema },
  // The owner's settings: read from config.json as it is now, written for the next start.
  "POST /config/read": { method: "POST", request: Empty, answer: SettingsDocumentSchema },
  "POST /config/write": { method: "POST", request: SettingWriteSchema, answer: SettingWrittenSchema },
  // Secrets: values come in and are sealed on the bridge; nothing answers one back.
  "POST /secrets/list": { method: "POST", request: Empty, answer: SecretListingSchema },
  "POST /secrets/put": {
    method: "POST",
    request: SecretStoreRequestSchema,
    answer: z.object({ replaced: z.boolean(), resealed: z.number() }),
  },
  "POST /secrets/delete": {
    method: "POST",
    request: SecretDeleteRequestSchema,
    answer: z.object({ deleted: z.boolean(), unassigned: z.array(z.object({ app: z.string(), as: z.string() })) }),
  },
  "POST /secrets/assign": {
    method: "POST",
    request: SecretAssignRequestSchema,
    answer: z.object({ assigned: z.literal(true) }),
  },
  "POST /secrets/unassign": {
    method: "POST",
    request: SecretUnassignRequestSchema,
    answer: z.object({ unassigned: z.boolean() }),
  },
  // Whether a running backend holds other secrets than a start now would give it (never a value).
  "POST /secrets/pending": {
    method: "POST",
    request: NameRequest.extend({ manifest: AnyObject, digest: Digest }),
    answer: z.object({ running: z.boolean(), restartPending: z.boolean() }),
  },
  "POST /secrets/rebind": {
    method: "POST",
    request: SecretRebindRequestSchema,
    answer: z.object({ rebound: z.array(z.string()), dropped: z.array(z.string()) }),
  },
  // A backup archive of the whole home: answered as the archive's bytes (application/octet-stream), not JSON.
  "POST /durability/backup": { method: "POST", request: BackupRequestSchema, answer: z.unknown() },
  // Installs now the packages of every app restore-packages.json lists (a merge restore's apps), then starts those enabled.
  "POST /durability/packages": {
    method: "POST",
    request: z.strictObject({}),
    answer: z.object({ apps: z.array(PackagesOutcomeSchema) }),
  },
} as const satisfies Record<string, OperationContract>;

export type BridgeOperationName = keyof typeof BRIDGE_OPERATIONS;
/** What a caller sends to an operation (before defaults), and what the bridge's handler receives (parsed). */
export type BridgeRequest<N extends BridgeOperationName> = z.input<(typeof BRIDGE_OPERATIONS)[N]["request"]>;
export type BridgeParsedRequest<N extends BridgeOperationName> = z.output<(typeof BRIDGE_OPERATIONS)[N]["request"]>;
export type BridgeAnswer<N extends BridgeOperationName> = z.output<(typeof BRIDGE_OPERATIONS)[N]["answer"]>;

/** What the bridge tells the gateway about one app's backend: its status and current proxy secret. */
export const BackendReportSchema = z
  .object({ status: BackendStatusSchema, secret: z.string().max(200).nullable() })
  .strict();
export type BackendReport = z.infer<typeof BackendReportSchema>;

/** What the gateway is asked about a transition a killed gateway left half done; the record decides. */
export const JournalQuestionSchema = z.discriminatedUnion("op", [
  z.object({ op: z.literal("install"), digest: Digest }).strict(),
  z
    .object({ op: z.literal("update"), fromDigest: Digest, toDigest: Digest, ready: ReadyUpdateSchema.optional() })
    .strict(),
  z.object({ op: z.literal("uninstall"), consentDigest: Digest }).strict(),
]);
/** The gateway's answer for one journal: keep the transition's result, or undo it. */
export const JournalVerdictSchema = z.object({ outcome: z.enum(["finish", "undo"]) });

/** The package's native apps this start staged, for the gateway to record (each then proven by /apps/native/verify). */
export const NativeAppsReportSchema = z
  .object({ apps: z.array(z.object({ digest: Digest, source: z.string().max(4096) }).strict()).max(100) })
  .strict();

/** One step of a transition the owner named with install_id: identifiers only. */
export const InstallProgressEventSchema = z
  .object({
    install_id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
    op: z.enum(["install", "update", "uninstall", "transition"]),
    step: z.string().regex(/^[a-z0-9_.-]{1,64}$/),
    status: z.string().regex(/^[a-z0-9_.-]{1,32}$/),
  })
  .strict();

/** One contract row of a call back into the gateway; `:name` in the path is the app's name. */
interface CallbackContract {
  method: "GET" | "POST";
  path: string;
  request: z.ZodType;
  answer: z.ZodType;
}

/** The internal gateway routes the bridge calls; the worker's route rows take their bodies from here. */
export const GATEWAY_CALLBACKS = {
  // Every Durable Object's consistent export, for the backup the bridge writes (a POST: the log signs a checkpoint over its head).
  exportGatewayState: {
    method: "POST",
    path: "/api/internal/durability/export",
    request: Empty,
    answer: GatewayStateExportSchema,
  },
  appendSecurityRow: {
    method: "POST",
    path: "/api/internal/sel/append",
    request: SecurityEventInputSchema,
    answer: AppendResultSchema,
  },
  reportBackend: {
    method: "POST",
    path: "/api/internal/apps/:name/backend",
    request: BackendReportSchema,
    answer: z.object({ known: z.boolean() }),
  },
  askJournal: {
    method: "POST",
    path: "/api/internal/apps/:name/journal",
    request: JournalQuestionSchema,
    answer: JournalVerdictSchema,
  },
  releaseAbandonedTransitions: {
    method: "POST",
    path: "/api/internal/apps/transitions-abandoned",
    request: z.object({ name: z.string().regex(APP_NAME_PATTERN).nullable(), takenBefore: z.number() }).strict(),
    answer: z.object({ released: z.number().int() }),
  },
  startableApps: {
    method: "GET",
    path: "/api/internal/apps/startable",
    request: NoBody,
    answer: z.object({
      apps: z.array(z.object({ name: z.string(), manifest: AnyObject, digest: z.string().optional() })),
    }),
  },
  // The folders a start of the app's backend binds: the record's grants the manifest still declares.
  appFolderGrants: {
    method: "GET",
    path: "/api/internal/apps/:name/folders",
    request: NoBody,
    answer: z.object({ folders: z.array(FolderGrantSchema) }),
  },
  backendsReported: {
    method: "POST",
    path: "/api/internal/apps/backends-reported",
    request: Empty,
    answer: z.object({ ok: z.literal(true) }),
  },
  recordNativeApps: {
    method: "POST",
    path: "/api/internal/apps/native",
    request: NativeAppsReportSchema,
    answer: z.object({ synced: z.number().int() }),
  },
  announceInstallProgress: {
    method: "POST",
    path: "/api/internal/events/install-progress",
    request: InstallProgressEventSchema,
    answer: z.object({ published: z.literal(true) }),
  },
} as const satisfies Record<string, CallbackContract>;

export type GatewayCallbackName = keyof typeof GATEWAY_CALLBACKS;
export type GatewayCallbackRequest<N extends GatewayCallbackName> = z.input<(typeof GATEWAY_CALLBACKS)[N]["request"]>;
export type GatewayCallbackAnswer<N extends GatewayCallbackName> = z.output<(typeof GATEWAY_CALLBACKS)[N]["answer"]>;
