// App management (INST-*, ORIG-*, BACK lifecycle): preview, install, listing, enable,
// disable and uninstall are owner-only; an app may read its own row. The host bridge does
// the file and process work; AppRegistry holds the one record of each install.

import { appRegistry, approvalStore } from "../../durable/instances";
import { closeAppSockets, emitEvent } from "../../durable/event-hub/emit";
import { z } from "zod";
import { ErrorEnvelopeSchema, GatewayError, type ErrorCode } from "../../kernel/contracts/errors";
import { AppViewSchema, type AppRecord } from "../../kernel/contracts/app-record";
import { McpRegistrationSchema } from "../../kernel/contracts/mcp";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { appNotFound, readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import {
  BackendReportSchema,
  BRIDGE_OPERATIONS,
  GATEWAY_CALLBACKS,
  JournalQuestionSchema,
  NativeAppsReportSchema,
  type ReadyUpdate,
} from "../../kernel/contracts/bridge-operations";
import { JobViewSchema } from "../../kernel/contracts/scheduled-jobs";
import { APP_LOG_MAX_LINES, AppLogAnswerSchema } from "../../kernel/contracts/app-log";
import { InstallReviewSchema } from "../../kernel/contracts/install-review";
import { safeLine } from "../../kernel/text/text-safety";
import { sessions } from "../sessions";
import { requireIfMatch } from "../../kernel/contracts/revision";
import type { Env } from "../../durable/env";
import { route, type RouteRequest } from "../route-row";
import { deregisterMcpServers, registerMcpServers } from "../mcp-registration";
import { completeUpdate, recordUpdate, uiRevisionOf } from "../lifecycle/update-commit";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";

const AppLogQuerySchema = z
  .object({
    lines: z
      .string()
      .regex(/^[1-9][0-9]{0,2}$/)
      .refine((n) => Number(n) <= APP_LOG_MAX_LINES, `at most ${APP_LOG_MAX_LINES}`)
      .optional(),
    q: z.string().max(200).optional(),
  })
  .strict();

const AbsoluteSource = z.string().min(1).max(4096);
const AnyObject = z.record(z.string(), z.unknown());
// With `name`, the preview is of an update: it also says what changes against the installed copy's consented review.
const PreviewBody = z.object({ source: AbsoluteSource, name: z.string().max(64).optional() }).strict();
const UpdateBody = z
  .object({
    source: AbsoluteSource,
    consent: z.string().max(200).optional(),
    install_id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
  })
  .strict();
// A transition lock lapses after this long in case the request holding it vanished (the
// longest transition, an install, may take 15 minutes of package downloads).
const TRANSITION_TTL_MS = 20 * 60 * 1000;
const InstallBody = z
  .object({
    source: AbsoluteSource,
    consent: z.string().max(200).optional(),
    confirm: z.boolean().optional(),
    install_id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
    // Explicit consent to take over the data an earlier install of this name left parked.
    adopt_data: z.boolean().optional(),
  })
  .strict();
const AppName = z.string().regex(APP_NAME_PATTERN).max(64);
const UninstallBody = z
  .object({
    purge_data: z.boolean().optional(),
    install_id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
  })
  .strict();
const Empty = z.object({}).strict();
// Answers the bridge gives and these routes pass on: the bridge contract's own schemas.
const PreviewAnswer = BRIDGE_OPERATIONS["POST /apps/preview"].answer;
const InstallProgressAnswer = BRIDGE_OPERATIONS["POST /apps/install-progress"].answer;
const ParkedAnswer = BRIDGE_OPERATIONS["POST /apps/parked"].answer;
const PurgedAnswer = BRIDGE_OPERATIONS["POST /apps/parked/purge"].answer;
const AppConfigAnswer = z.strictObject({ config: AnyObject, revision: z.string() });
const JobsAnswer = z.strictObject({ jobs: z.array(JobViewSchema) });
const SwitchedAnswer = z.strictObject({ app: AppViewSchema, changed: z.boolean() });

/** What staging, validating and scanning a bundle can refuse (the host bridge's staging, manifest and scan steps). */
const BUNDLE_REFUSALS: ErrorCode[] = [
  "bundle_source_invalid",
  "bundle_unreadable",
  "bundle_link_absolute",
  "bundle_link_escapes",
  "bundle_link_to_folder",
  "bundle_link_dangling",
  "bundle_link_loop",
  "bundle_link_crosses_data",
  "bundle_link_into_omitted",
  "bundle_link_in_ui",
  "bundle_reserved_name_is_link",
  "bundle_hardlink_outside",
  "bundle_special_file",
  "bundle_name_invalid",
  "bundle_name_collision",
  "bundle_too_many_files",
  "bundle_too_deep",
  "bundle_file_too_large",
  "bundle_too_large",
  "bundle_changed_during_copy",
  "bundle_wheel_not_binary",
  "manifest_missing",
  "manifest_invalid",
  "manifest_path_escapes",
  "manifest_native_refused",
  "manifest_key_refused",
  "manifest_ui_folder_invalid",
  "manifest_npm_not_registry",
  "manifest_config_security",
  "manifest_address_refused",
  "app_name_reserved",
  "core_incompatible",
  "scan_dangerous",
];

/**
 * What the gateway holds in a removed app's name ends with it: its record, its tokens, and the
 * approvals it asked and grants it was given, so an app installed later under the same name
 * inherits none of them.
 */
/**
 * Puts back what an uninstall took before its files went: the app's jobs (from its record;
 * their past fires are not kept) and, for an enabled app, its servers in mcp.json. Best
 * effort: the refusal that called it is the answer, and a step that fails here is a line.
 */
async function undoUninstallStart(env: Env, record: AppRecord, now: number): Promise<void> {
  await appRegistry(env)
    .reconcileJobs(record.name, now)
    .catch((error: unknown) => console.error("uninstall_undo_jobs_failed", record.name, String(error)));
  if (record.enabled)
    await registerMcpServers(env, record.name, record.manifest).catch((error: unknown) =>
      console.error("uninstall_undo_mcp_failed", record.name, String(error)),
    );
}

async function forgetRemovedApp(env: Env, name: string, now: number): Promise<{ approvals: number; grants: number }> {
  await appRegistry(env).remove(name);
  await sessions(env).revokeApp(name, now);
  return approvalStore(env).forgetAsker(`app:${name}`);
}

function requireAbsolute(source: string): void {
  if (!source.startsWith("/") || source.includes("\0")) throw new GatewayError("app_source_invalid");
}

/** Runs `work`; a refusal becomes one security-log row naming its code, then is re-raised. */
async function auditedRefusal<T>(
  req: RouteRequest<unknown, unknown>,
  kind: string,
  subject: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GatewayError) {
      const detail = (error.detail ?? {}) as { path?: string; step?: string };
      await req.audit({
        kind,
        outcome: "refused",
        subject,
        detail: { code: error.code, path: detail.path ?? null, step: detail.step ?? null },
      });
    }
    throw error;
  }
}

/**
 * The test build only (like X-Test-Now): `X-Test-Fail: record` makes the record step fail after
 * the folder moved into place, to prove the install is undone.
 */
function injectedRecordFailure(req: RouteRequest<unknown, unknown>): void {
  if (TEST_BUILD) {
    if (req.c.req.header("x-test-fail") === "record") throw new Error("injected failure of the record step");
  }
}

/**
 * Runs one transition of an app under its lock (LIFE-01): a second transition meanwhile is
 * refused with 409 app_busy (retryable) and changes nothing.
 */
export async function withTransition<T>(
  req: RouteRequest<unknown, unknown>,
  name: string,
  kind: string,
  work: () => Promise<T>,
): Promise<T> {
  const registry = appRegistry(req.env);
  const lock = await registry.beginTransition(name, kind, req.now, TRANSITION_TTL_MS);
  if (!lock.ok)
    throw new GatewayError("app_busy", {
      vars: { name: name.slice(0, 80), kind: lock.kind },
      detail: { retryable: true, kind: lock.kind },
      headers: { "Retry-After": "1" },
    });
  try {
    return await work();
  } finally {
    await registry.endTransition(name, lock.token);
  }
}

/** The record's consented review, as the bridge compares an update with it. */
function installedCopy(record: AppRecord) {
  return {
    manifest: record.manifest,
    review: record.review ?? null,
    digest: record.consentDigest,
    enabled: record.enabled,
  };
}

/**
 * An update whose request went away: a ready one is recorded forward when the record still
 * names the version it replaced, and its commit steps are completed either way (each safe to
 * repeat); one not ready stands only if it was recorded.
 */
async function settleUpdate(
  req: RouteRequest<unknown, unknown>,
  name: string,
  record: AppRecord | null,
  question: { fromDigest: string; toDigest: string; ready?: ReadyUpdate },
): Promise<"finish" | "undo"> {
  const { ready } = question;
  if (!record || !ready || ready.digest !== question.toDigest)
    return record?.consentDigest === question.toDigest ? "finish" : "undo";
  if (record.consentDigest !== question.fromDigest && record.consentDigest !== question.toDigest) return "undo";
  const previous = AppManifestSchema.parse(ready.previousManifest);
  const manifest =
    record.consentDigest === question.fromDigest
      ? await recordUpdate(req, record, ready)
      : AppManifestSchema.parse(record.manifest);
  await completeUpdate(req, {
    name,
    enabled: record.enabled,
    fromDigest: question.fromDigest,
    fromVersion: previous.version,
    previous,
    manifest,
    ready,
    settled: true,
  });
  return "finish";
}

/** Starts an app's backend; the consent digest is what its assigned secrets open under. */
async function startBackend(env: Env, name: string, manifest: AppManifest, digest: string): Promise<void> {
  if (!manifest.backend) return;
  await bridgeCall(env, "POST /backends/start", { name, manifest, digest }, 60_000);
}

/** Undoes a failed enable of a disabled app: its backend stopped, its servers out of mcp.json (each best effort). */
async function undoEnable(env: Env, app: AppRecord): Promise<void> {
  if (app.manifest.backend)
    await bridgeCall(env, "POST /backends/stop", { name: app.name }, 30_000).catch((error: unknown) =>
      console.error("enable_undo", app.name, "backend stop failed", error instanceof Error ? error.message : error),
    );
  await deregisterMcpServers(env, app.name, app.manifest).catch((error: unknown) =>
    console.error("enable_undo", app.name, "mcp.json not restored", error instanceof Error ? error.message : error),
  );
}

export const appRoutes = [
  route({
    method: "POST",
    path: "/api/apps/preview",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: PreviewBody,
    contract:
      "Stages a folder in quarantine and answers its review and consent digest; installs nothing. With `name` (an installed app), it also answers `changes` against the review the owner consented to and whether an update needs consent.",
    answer: { schema: PreviewAnswer },
    refuses: ["app_source_invalid", "app_not_found", ...BUNDLE_REFUSALS, "bridge_unavailable"],
    async handle(req) {
      requireAbsolute(req.body.source);
      const installed = req.body.name === undefined ? undefined : await requireRecord(req.env, req.body.name);
      return auditedRefusal(req, "app_preview_refused", req.body.source, () =>
        bridgeCall(
          req.env,
          "POST /apps/preview",
          installed
            ? { source: req.body.source, installedReview: installed.review ?? null }
            : { source: req.body.source },
          300_000,
        ),
      );
    },
  }),
  route({
    method: "POST",
    path: "/api/apps",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: InstallBody,
    contract:
      "Installs a folder only if its staged bytes hash to `consent`; otherwise 409 consent_required with the current review. Nothing is installed on any failure.",
    answer: {
      schema: z.strictObject({
        app: AppViewSchema,
        digest: z.string(),
        mcp: McpRegistrationSchema.extend({ error: ErrorEnvelopeSchema.shape.error.optional() }),
      }),
    },
    refuses: [
      "app_source_invalid",
      ...BUNDLE_REFUSALS,
      "consent_required",
      "app_exists",
      "parked_data_not_found",
      "parked_data_not_adoptable",
      "install_hook_failed",
      "install_hook_timeout",
      "install_step_failed",
      "install_not_recordable",
      "bridge_unavailable",
    ],
    async handle(req) {
      requireAbsolute(req.body.source);
      const registry = appRegistry(req.env);
      const takenNames = await registry.names();
      const installed = await auditedRefusal(req, "app_install_failed", req.body.source, () =>
        bridgeCall(
          req.env,
          "POST /apps/install",
          {
            source: req.body.source,
            consent: req.body.consent,
            takenNames,
            installId: req.body.install_id,
            adoptData: req.body.adopt_data === true,
          },
          900_000,
        ),
      );
      // The folder is in place now; if the record cannot be written, the move is undone so the
      // name is free again and nothing is left behind (issue 11 item 6).
      const name = String(installed.manifest.name);
      await auditedRefusal(req, "app_install_failed", req.body.source, async () => {
        let added: boolean;
        try {
          const manifest = AppManifestSchema.parse(installed.manifest);
          const record: AppRecord = {
            name: manifest.name,
            displayName: manifest.displayName ?? manifest.name,
            version: manifest.version,
            origin: "local",
            source: req.body.source,
            resources: "gateway",
            lifecycle: "gateway",
            enabled: true,
            manifest,
            consentDigest: installed.digest,
            installedAt: new Date(req.now).toISOString(),
            uiRevision: uiRevisionOf(manifest, installed.digest),
            uiFiles: installed.uiFiles,
            review: installed.review,
          };
          injectedRecordFailure(req);
          added = await registry.add(record);
        } catch (error) {
          await bridgeCall(req.env, "POST /apps/install-undo", { name, adoptedData: installed.adoptedData }, 60_000);
          throw error instanceof GatewayError
            ? error
            : new GatewayError("install_step_failed", {
                vars: { step: "record", reason: error instanceof Error ? error.message : String(error) },
                detail: { step: "record" },
              });
        }
        if (!added) {
          await bridgeCall(req.env, "POST /apps/install-undo", { name, adoptedData: installed.adoptedData }, 60_000);
          throw new GatewayError("app_exists", { vars: { name } });
        }
      });
      // Recorded: the install's journal goes (a crash before this is settled at the next start).
      await bridgeCall(req.env, "POST /apps/transition-commit", { name }, 60_000);
      const manifest = AppManifestSchema.parse(installed.manifest);
      await req.audit({
        kind: "app_installed",
        outcome: "allowed",
        subject: manifest.name,
        detail: {
          consent: installed.digest,
          source: req.body.source,
          version: manifest.version,
          adopted_data: installed.adoptedData ? installed.adoptedData.version : null,
        },
      });
      await emitEvent(req.env, "app.installed", { app: manifest.name });
      await startBackend(req.env, manifest.name, manifest, installed.digest);
      // The app is installed now: its servers reach mcp.json and its jobs the schedule (CRON-01).
      // It is recorded: a mcp.json that cannot be written is said in the answer, not undone.
      const mcp = await registerMcpServers(req.env, manifest.name, manifest).catch((error: unknown) => {
        if (error instanceof GatewayError)
          return { registered: [], skipped: [], removed: [], error: error.toEnvelope().error };
        throw error;
      });
      await registry.reconcileJobs(manifest.name, req.now);
      return { app: await registry.get(manifest.name), digest: installed.digest, mcp };
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/installs/:id",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    contract: "The steps of an install started with this install_id, as they happen (null when unknown).",
    answer: { schema: InstallProgressAnswer },
    refuses: ["bridge_unavailable"],
    async handle({ env, params }) {
      return bridgeCall(env, "POST /apps/install-progress", {
        id: params.id,
      });
    },
  }),
  route({
    method: "GET",
    path: "/api/apps",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "Every installed app: name, display name, version, origin, resources, lifecycle, enabled, requires, native and backend.",
    answer: { schema: z.strictObject({ apps: z.array(AppViewSchema) }) },
    refuses: [],
    async handle({ env }) {
      return { apps: await appRegistry(env).list() };
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/parked",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "The data/ folders keep-data uninstalls left parked: each with the name, version, consent digest and date of the install it came from.",
    answer: { schema: ParkedAnswer },
    refuses: ["bridge_unavailable"],
    async handle({ env }) {
      return bridgeCall(env, "POST /apps/parked", undefined);
    },
  }),
  route({
    method: "DELETE",
    path: "/api/apps/parked/:name",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract: "Deletes the parked data/ of a name for good; 404 parked_data_not_found when none is parked.",
    answer: { schema: PurgedAnswer },
    refuses: ["parked_data_not_found", "bridge_unavailable"],
    async handle(req) {
      const name = AppName.safeParse(req.params.name);
      if (!name.success)
        throw new GatewayError("parked_data_not_found", { vars: { name: req.params.name.slice(0, 80) } });
      const purged = await bridgeCall(req.env, "POST /apps/parked/purge", { name: name.data }, 60_000);
      await req.audit({ kind: "app_parked_data_purged", outcome: "allowed", subject: name.data });
      return purged;
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/:name",
    family: "apps",
    authz: { kind: "app-may", why: "an app reads its own row", owns: "name" },
    internal: true,
    contract:
      "One installed app's row, with its backend's running, healthy, pid, port, startedAt, restarts, lastLines and exit.",
    answer: { schema: AppViewSchema },
    refuses: ["app_not_found"],
    async handle({ env, params }) {
      const view = await appRegistry(env).get(params.name);
      if (!view) throw appNotFound(params.name);
      return view;
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/:name/consent",
    family: "apps",
    authz: { kind: "owner" },
    internal: false,
    contract:
      "What the owner consented to for this install: the review (every disclosure, as the install showed it; null for a record kept before reviews were) and its digest.",
    answer: {
      schema: z.strictObject({ app: z.string(), digest: z.string(), review: InstallReviewSchema.nullable() }),
    },
    refuses: ["app_not_found"],
    async handle({ env, params }) {
      const record = await requireRecord(env, params.name);
      return { app: record.name, digest: record.consentDigest, review: record.review ?? null };
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/:name/logs",
    family: "apps",
    authz: { kind: "owner" },
    internal: false,
    query: AppLogQuerySchema,
    contract: `The last lines (default 100, at most ${APP_LOG_MAX_LINES}) its backend wrote to the gateway log, oldest first, masked and escaped; q keeps the lines holding that text (case-insensitive).`,
    answer: { schema: AppLogAnswerSchema.extend({ app: z.string() }).strict() },
    refuses: ["app_not_found"],
    async handle({ env, params, query }) {
      const view = await appRegistry(env).get(params.name);
      if (!view) throw appNotFound(params.name);
      const answer = await bridgeCall(env, "POST /apps/logs", {
        name: params.name,
        lines: query.lines === undefined ? 100 : Number(query.lines),
        ...(query.q === undefined || query.q === "" ? {} : { q: query.q }),
      });
      // The bridge masked them to search them; the gateway still passes on no text it did not make safe.
      return { app: params.name, lines: answer.lines.map((line) => safeLine(line)), truncated: answer.truncated };
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/:name/config",
    family: "apps",
    authz: { kind: "app-may", why: "an app reads its own config", owns: "name" },
    internal: false,
    contract: "The app's own config document and its revision (send it back as If-Match to replace it).",
    answer: { schema: AppConfigAnswer },
    refuses: ["app_not_found"],
    async handle({ env, params }) {
      const current = await appRegistry(env).config(params.name);
      if (!current) throw appNotFound(params.name);
      return current;
    },
  }),
  route({
    method: "PUT",
    path: "/api/apps/:name/config",
    family: "apps",
    authz: { kind: "app-may", why: "an app replaces its own config", owns: "name" },
    internal: false,
    body: z.object({ config: AnyObject }).strict(),
    contract:
      "Replaces the app's config as a whole: 428 revision_required without If-Match, 409 stale_write if it changed since read; nothing written then. Answers the new revision.",
    answer: { schema: AppConfigAnswer },
    refuses: ["revision_required", "app_not_found", "stale_write"],
    async handle(req) {
      const basedOn = requireIfMatch(req.c.req.header("if-match"));
      const result = await appRegistry(req.env).replaceConfig(req.params.name, basedOn, req.body.config);
      if (!result.ok && result.reason === "unknown_app") throw appNotFound(req.params.name);
      if (!result.ok) throw new GatewayError("stale_write");
      await emitEvent(req.env, "config.changed", {
        field: "app.config",
        app: req.params.name,
        revision: result.revision,
      });
      return { config: req.body.config, revision: result.revision };
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/:name/jobs",
    family: "jobs",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "The app's scheduled jobs: schedule, time zone, route, timeout, next fire (null while the app is disabled) and the last 50 fires of each (outcome, status, duration, first error line), newest first.",
    answer: { schema: JobsAnswer },
    refuses: ["app_not_found"],
    async handle({ env, params, c, now }) {
      const registry = appRegistry(env);
      if (!(await registry.get(params.name))) throw appNotFound(params.name);
      // The test build only: the injectable clock (X-Test-Now) drives the same fire the alarm runs.
      if (TEST_BUILD) {
        if (c.req.header("x-test-now") !== undefined) await registry.runDueJobs(now);
      }
      return { jobs: await registry.jobs(params.name) };
    },
  }),
  route({
    method: "POST",
    path: "/api/apps/:name/enable",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract:
      "Turns an app on and starts its backend; on an enabled app a no-op answering 200. All or nothing, least reversible last: its MCP servers are written to mcp.json, then its backend starts, then the record says enabled; a step that fails undoes the ones before it (a disabled app stays wholly off) and the record is unchanged. 409 app_busy while another change of the app is under way.",
    answer: { schema: SwitchedAnswer },
    refuses: ["app_not_found", "app_busy", "mcp_json_unreadable", "bridge_unavailable"],
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      return auditedRefusal(req, "app_enable_refused", record.name, () =>
        withTransition(req, record.name, "enable", async () => {
          const current = (await readRecord(req.env, record.name)) ?? record;
          const changed = !current.enabled;
          // All or nothing, least reversible last: mcp.json (nothing runs yet), the backend, the
          // record. A failed step undoes the ones before it, so a disabled app stays wholly off.
          await registerMcpServers(req.env, current.name, current.manifest);
          try {
            await startBackend(req.env, current.name, current.manifest, current.consentDigest);
            if (changed) await appRegistry(req.env).setEnabled(current.name, true);
          } catch (error) {
            if (changed) await undoEnable(req.env, current);
            throw error;
          }
          await appRegistry(req.env).reconcileJobs(current.name, req.now);
          await req.audit({ kind: "app_enabled", outcome: "allowed", subject: current.name, detail: { changed } });
          if (changed) await emitEvent(req.env, "app.enabled", { app: current.name });
          return { app: await appRegistry(req.env).get(current.name), changed };
        }),
      );
    },
  }),
  route({
    method: "POST",
    path: "/api/apps/:name/disable",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract:
      "Turns an app off: stops its backend, revokes its tokens (C-22); on a disabled app a no-op answering 200. The backend stops first: if the bridge cannot stop it, the record is unchanged. 409 app_busy while another change of the app is under way.",
    answer: { schema: SwitchedAnswer },
    refuses: ["app_not_found", "app_busy", "mcp_json_unreadable", "bridge_unavailable"],
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      return auditedRefusal(req, "app_disable_refused", record.name, () =>
        withTransition(req, record.name, "disable", async () => {
          const current = (await readRecord(req.env, record.name)) ?? record;
          if (!current.enabled) {
            await req.audit({
              kind: "app_disabled",
              outcome: "allowed",
              subject: current.name,
              detail: { changed: false, tokens_revoked: 0 },
            });
            return { app: await appRegistry(req.env).get(current.name), changed: false };
          }
          // Its servers leave mcp.json first, so no agent starts one of a disabled app (MCP-01);
          // a backend that cannot be stopped puts them back, so the app stays wholly on.
          await deregisterMcpServers(req.env, current.name, current.manifest);
          try {
            if (current.manifest.backend)
              await bridgeCall(req.env, "POST /backends/stop", { name: current.name }, 30_000);
          } catch (error) {
            await registerMcpServers(req.env, current.name, current.manifest).catch(() => undefined);
            throw error;
          }
          await appRegistry(req.env).setEnabled(current.name, false);
          await appRegistry(req.env).reconcileJobs(current.name, req.now);
          const revoked = await sessions(req.env).revokeApp(current.name, req.now);
          await closeAppSockets(req.env, current.name);
          await req.audit({
            kind: "app_disabled",
            outcome: "allowed",
            subject: current.name,
            detail: { changed: true, tokens_revoked: revoked },
          });
          await emitEvent(req.env, "app.disabled", { app: current.name });
          return { app: await appRegistry(req.env).get(current.name), changed: true };
        }),
      );
    },
  }),
  route({
    method: "POST",
    path: "/api/apps/:name/restart",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract:
      "Restarts an enabled app's backend (stopped, then started with the same command); it counts in `restarts`. 409 app_busy while another change of the app is under way.",
    answer: { schema: z.strictObject({ app: AppViewSchema }) },
    refuses: ["app_not_found", "app_busy", "app_restart_failed", "bridge_unavailable"],
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      return auditedRefusal(req, "app_restart_refused", record.name, () =>
        withTransition(req, record.name, "restart", async () => {
          if (!record.manifest.backend)
            throw new GatewayError("app_restart_failed", {
              vars: { name: record.name, reason: "the app has no backend" },
            });
          if (!record.enabled)
            throw new GatewayError("app_restart_failed", {
              vars: { name: record.name, reason: "the app is disabled; enable it" },
            });
          const restarted = await bridgeCall(
            req.env,
            "POST /backends/restart",
            { name: record.name, manifest: record.manifest, digest: record.consentDigest },
            60_000,
          );
          if (!restarted.started)
            throw new GatewayError("app_restart_failed", {
              vars: { name: record.name, reason: restarted.reason ?? "it did not start" },
            });
          await req.audit({ kind: "app_restarted", outcome: "allowed", subject: record.name });
          return { app: await appRegistry(req.env).get(record.name) };
        }),
      );
    },
  }),
  route({
    method: "POST",
    path: "/api/apps/:name/update",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: UpdateBody,
    contract:
      "Updates an installed app from a folder (UPD-01..08). An update that changes nothing the owner consented to and scans clean needs no consent; otherwise 409 consent_required with the review and its changes until `consent` is the new digest. The old version is kept until the new backend answers its health check within 30 s, else it is restored with its data and the answer says why. 400 app_update_locked for a native app; 409 app_busy during another change.",
    answer: { schema: z.strictObject({ app: AppViewSchema, digest: z.string(), changes: z.array(AnyObject) }) },
    refuses: [
      "app_source_invalid",
      "app_not_found",
      "app_busy",
      "app_update_locked",
      ...BUNDLE_REFUSALS,
      "consent_required",
      "app_update_name_mismatch",
      "update_unhealthy",
      "update_step_failed",
      "update_needs_disk_space",
      "secret_store_unreadable",
      "mcp_json_unreadable",
      "bridge_unavailable",
    ],
    async handle(req) {
      requireAbsolute(req.body.source);
      const record = await requireRecord(req.env, req.params.name);
      return auditedRefusal(req, "app_update_refused", record.name, () =>
        withTransition(req, record.name, "update", async () => {
          if (record.lifecycle === "locked")
            throw new GatewayError("app_update_locked", { vars: { name: record.name } });
          const current = (await readRecord(req.env, record.name)) ?? record;
          const updated = await bridgeCall(
            req.env,
            "POST /apps/update",
            {
              name: current.name,
              source: req.body.source,
              consent: req.body.consent,
              installed: installedCopy(current),
              installId: req.body.install_id,
            },
            900_000,
          );
          let manifest: AppManifest;
          try {
            injectedRecordFailure(req);
            manifest = await recordUpdate(req, current, {
              ...updated,
              source: req.body.source,
              previousManifest: current.manifest,
            });
          } catch (error) {
            await bridgeCall(
              req.env,
              "POST /apps/update-undo",
              { name: current.name, installed: installedCopy(current) },
              120_000,
            );
            throw error instanceof GatewayError
              ? error
              : new GatewayError("update_step_failed", {
                  vars: {
                    name: current.name,
                    step: "record",
                    reason: error instanceof Error ? error.message : String(error),
                  },
                  detail: { step: "record" },
                });
          }
          // Every step of the commit before the bridge drops the journal: a crash between any two
          // leaves it, and the settlement that follows finishes the rest (update-commit.ts).
          await completeUpdate(req, {
            name: current.name,
            enabled: current.enabled,
            fromDigest: current.consentDigest,
            fromVersion: current.version,
            previous: current.manifest,
            manifest,
            ready: updated,
            settled: false,
          });
          await bridgeCall(req.env, "POST /apps/transition-commit", { name: current.name }, 120_000);
          return {
            app: await appRegistry(req.env).get(current.name),
            digest: updated.digest,
            changes: updated.changes,
          };
        }),
      );
    },
  }),
  route({
    method: "DELETE",
    path: "/api/apps/:name",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: UninstallBody,
    contract:
      'Uninstalls an app: stops it, revokes its tokens, removes its files; data/ is kept unless the body is exactly {"purge_data": true}. All or nothing up to its files: its servers leave mcp.json, its jobs are removed, then the bridge runs its hook, stops it and removes its files, and only then is its record forgotten; a refusal before the files go (mcp.json unreadable, parked data in the way, the bridge unreachable) puts its servers and jobs back and leaves the app as it was. A native app is refused: disable it instead.',
    answer: { schema: z.strictObject({ removed: z.string(), data_kept: z.boolean() }) },
    refuses: [
      "app_not_found",
      "app_locked",
      "app_busy",
      "parked_data_exists",
      "mcp_json_unreadable",
      "bridge_unavailable",
    ],
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      if (record.lifecycle === "locked") throw new GatewayError("app_locked", { vars: { name: record.name } });
      const purgeData = req.body.purge_data === true;
      return auditedRefusal(req, "app_uninstall_refused", record.name, () =>
        withTransition(req, record.name, "uninstall", async () => {
          // Teardown order, least reversible last: its servers leave mcp.json (put back at once);
          // its jobs go in one transaction, before its hook, backend and files, so none fires at
          // a removed app (UNIN-02); then the bridge's hook, backend and files; the record last.
          // A refusal before the files go puts the servers and jobs back: the app is left whole.
          // (mcp.json went after the jobs: an unreadable mcp.json left an installed app without them.)
          await deregisterMcpServers(req.env, record.name, record.manifest);
          let jobsRemoved: number;
          let removed: { uninstallHook: string | null };
          try {
            jobsRemoved = await appRegistry(req.env).removeJobs(record.name);
            removed = await bridgeCall(
              req.env,
              "POST /apps/remove",
              {
                name: record.name,
                purgeData,
                manifest: record.manifest,
                version: record.version,
                consentDigest: record.consentDigest,
                installId: req.body.install_id,
              },
              120_000,
            );
          } catch (error) {
            await undoUninstallStart(req.env, record, req.now);
            throw error;
          }
          const forgotten = await forgetRemovedApp(req.env, record.name, req.now);
          await closeAppSockets(req.env, record.name);
          await bridgeCall(req.env, "POST /apps/transition-commit", { name: record.name }, 60_000);
          await req.audit({
            kind: "app_uninstalled",
            outcome: "allowed",
            subject: record.name,
            detail: {
              purge_data: purgeData,
              uninstall_hook: removed.uninstallHook,
              jobs_removed: jobsRemoved,
              approvals_removed: forgotten.approvals,
              grants_removed: forgotten.grants,
            },
          });
          await emitEvent(req.env, "app.uninstalled", { app: record.name });
          return { removed: record.name, data_kept: !purgeData };
        }),
      );
    },
  }),
  route({
    method: "GET",
    path: "/api/internal/apps/startable",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    contract: "The enabled apps with a backend, for the host bridge to start at gateway start.",
    answer: {
      schema: z.strictObject({
        apps: z.array(z.strictObject({ name: z.string(), manifest: AnyObject, digest: z.string() })),
      }),
    },
    refuses: [],
    async handle({ env }) {
      const names = await appRegistry(env).names();
      const apps = [];
      for (const name of names) {
        const record = await readRecord(env, name);
        if (record?.enabled && record.manifest.backend)
          apps.push({ name, manifest: record.manifest, digest: record.consentDigest });
      }
      return { apps };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/apps/:name/backend",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: BackendReportSchema,
    contract: "The host bridge reports a backend's status and its current proxy secret.",
    answer: { schema: z.strictObject({ known: z.boolean() }) },
    refuses: [],
    async handle({ env, params, body }) {
      const registry = appRegistry(env);
      const before = (await registry.get(params.name))?.backend ?? null;
      const known = await registry.setBackend(params.name, body.status, body.secret ?? undefined);
      if (known && (before?.running !== body.status.running || before?.healthy !== body.status.healthy)) {
        await emitEvent(env, "backend.health_changed", {
          app: params.name,
          running: body.status.running,
          healthy: body.status.healthy,
        });
      }
      return { known };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/apps/:name/journal",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: JournalQuestionSchema,
    contract:
      "The host bridge asks about a transition left half done (at start, after workerd restarted, or when the request that asked for it went away): the record decides. An install stands (`finish`) when the record holds its digest, else it is undone. An update the bridge reports ready (its new version passed its health gate and may have served since) is finished: recorded here when the record still names the old version, and its commit steps (secrets, MCP servers, jobs, row) completed, each safe to repeat; an update not ready stands only when the record holds its digest. An uninstall whose folder already left is finished, and its record removed here.",
    answer: { schema: z.strictObject({ outcome: z.enum(["finish", "undo"]) }) },
    refuses: ["app_not_found"],
    async handle(req) {
      const name = AppName.safeParse(req.params.name);
      if (!name.success) throw appNotFound(req.params.name);
      const record = await readRecord(req.env, name.data);
      const body = req.body;
      let outcome: "finish" | "undo";
      if (body.op === "install") outcome = record?.consentDigest === body.digest ? "finish" : "undo";
      else if (body.op === "update") outcome = await settleUpdate(req, name.data, record, body);
      else {
        outcome = "finish";
        if (record && record.lifecycle !== "locked" && record.consentDigest === body.consentDigest) {
          // Its servers leave mcp.json here too (safe to repeat): a refused uninstall puts them
          // back, and a request that died after the folder left answers like a refusal. An
          // unreadable mcp.json must not hold the removal (or a start) back: it is a line.
          await deregisterMcpServers(req.env, name.data, record.manifest).catch((error: unknown) =>
            console.error("uninstall_settle_mcp_failed", name.data, String(error)),
          );
          await forgetRemovedApp(req.env, name.data, req.now);
        }
      }
      await req.audit({
        kind: "app_transition_recovered",
        outcome: "info",
        subject: name.data,
        detail: { op: body.op, outcome },
      });
      return { outcome };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/apps/transitions-abandoned",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: GATEWAY_CALLBACKS.releaseAbandonedTransitions.request,
    contract:
      "The host bridge has settled a transition whose request went away (workerd died or dropped it): the transition lock of that app, or with `name` null of every app, taken before `takenBefore` (ms since the epoch) is released, so the app does not answer app_busy until the lock would lapse. A lock taken since is left alone.",
    answer: { schema: GATEWAY_CALLBACKS.releaseAbandonedTransitions.answer },
    refuses: [],
    async handle(req) {
      const released = await appRegistry(req.env).releaseTransitionsTakenBefore(
        req.body.name,
        req.body.takenBefore,
        TRANSITION_TTL_MS,
      );
      if (released.length > 0)
        await req.audit({
          kind: "app_transition_recovered",
          outcome: "info",
          subject: req.body.name ?? "*",
          detail: { op: "lock_released", apps: released },
        });
      return { released: released.length };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/apps/backends-reported",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: Empty,
    contract: "The host bridge has started every backend it will start at this gateway start.",
    answer: { schema: z.strictObject({ ok: z.literal(true) }) },
    refuses: [],
    async handle({ env }) {
      await appRegistry(env).backendsReported();
      return { ok: true };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/apps/native",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: NativeAppsReportSchema,
    contract:
      "Records the package's native apps as origin builtin, lifecycle locked, keeping the owner's on/off. Each must be one the host bridge staged from the package's own apps/native/ at this start, with that digest (403 native_app_unproven otherwise); the manifest comes from the bridge, never from the caller.",
    answer: { schema: z.strictObject({ synced: z.number().int().min(0) }) },
    refuses: ["native_app_unproven", "mcp_json_unreadable", "bridge_unavailable"],
    async handle(req) {
      const registry = appRegistry(req.env);
      for (const entry of req.body.apps) {
        // A stolen internal credential must not be able to make an app unremovable: the bridge
        // proves by path and digest that it staged this app from apps/native/ itself.
        const proof = await auditedRefusal(req, "app_native_refused", entry.source, () =>
          bridgeCall(req.env, "POST /apps/native/verify", entry),
        );
        const manifest = AppManifestSchema.parse(proof.manifest);
        const existing = await readRecord(req.env, manifest.name);
        const record: AppRecord = {
          name: manifest.name,
          displayName: manifest.displayName ?? manifest.name,
          version: manifest.version,
          origin: "builtin",
          source: "builtin",
          resources: "gateway",
          lifecycle: "locked",
          enabled: existing?.origin === "builtin" ? existing.enabled : true,
          manifest,
          consentDigest: entry.digest,
          installedAt: existing?.installedAt ?? new Date(req.now).toISOString(),
          uiRevision: uiRevisionOf(manifest, entry.digest),
          uiFiles: proof.uiFiles,
        };
        await registry.replace(record);
        // Re-synced at every start, so its jobs and servers are reconciled with it (CRON-01).
        await registry.reconcileJobs(manifest.name, req.now);
        if (record.enabled) await registerMcpServers(req.env, manifest.name, manifest, existing?.manifest);
        if (!existing)
          await req.audit({
            kind: "app_installed",
            outcome: "allowed",
            subject: manifest.name,
            detail: { origin: "builtin", consent: entry.digest },
          });
      }
      return { synced: req.body.apps.length };
    },
  }),
];
