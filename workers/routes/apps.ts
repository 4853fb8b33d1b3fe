// App management (INST-*, ORIG-*, BACK lifecycle): preview, install, listing, enable,
// disable and uninstall are owner-only; an app may read its own row. The host bridge does
// the file and process work; AppRegistry holds the one record of each install. A change of an
// app (install, update, uninstall, enable, disable, restart) is one call into
// workers/lifecycle/, which takes its steps in order; the bridge's own calls back about apps
// are app-callbacks.ts.

import { appRegistry } from "../../durable/instances";
import { emitEvent } from "../../durable/event-hub/emit";
import { z } from "zod";
import { ErrorEnvelopeSchema, GatewayError, type ErrorCode } from "../../kernel/contracts/errors";
import { AppViewSchema } from "../../kernel/contracts/app-record";
import { McpRegistrationSchema } from "../../kernel/contracts/mcp";
import { appNotFound, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { BRIDGE_OPERATIONS } from "../../kernel/contracts/bridge-operations";
import { JobsQuerySchema, JobViewSchema } from "../../kernel/contracts/scheduled-jobs";
import { upcomingFires } from "../../kernel/time/cron-schedule";
import { APP_LOG_MAX_LINES, AppLogAnswerSchema } from "../../kernel/contracts/app-log";
import { InstallReviewSchema } from "../../kernel/contracts/install-review";
import { safeLine } from "../../kernel/text/text-safety";
import { requireIfMatch } from "../../kernel/contracts/revision";
import { AppNameSchema } from "../../kernel/rules/app-name";
import { route } from "../route-row";
import { auditedRefusal } from "../lifecycle/audited-refusal";
import { disableApp, enableApp } from "../lifecycle/enable-disable";
import { installApp, requireAbsolute } from "../lifecycle/install";
import { restartApp } from "../lifecycle/restart";
import { uninstallApp } from "../lifecycle/uninstall";
import { updateApp } from "../lifecycle/update";

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
  "manifest_secret_origin_not_granted",
  "app_name_reserved",
  "core_incompatible",
  "scan_dangerous",
];

export const appRoutes = [
  route({
    method: "POST",
    path: "/api/apps/preview",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: PreviewBody,
    contract:
      "Stages a folder in quarantine and answers its review and consent digest; installs nothing. With `name` (an installed app), it also answers `changes` against the review the owner consented to, whether an update needs consent, and `files`: the paths the update adds, changes and removes against the installed copy (at most 20 each, with totals).",
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
            ? { source: req.body.source, installedReview: installed.review ?? null, installedName: installed.name }
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
      return installApp(req, {
        source: req.body.source,
        consent: req.body.consent,
        installId: req.body.install_id,
        adoptData: req.body.adopt_data === true,
      });
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
      const name = AppNameSchema.safeParse(req.params.name);
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
    query: JobsQuerySchema,
    contract:
      "The app's scheduled jobs: schedule, time zone, route, timeout, next fire (null while the app is disabled) and the last 50 fires of each (outcome, status, duration, first error line), newest first. With `count` (1-100), each job also answers `upcoming`: its next fires after `from` (an ISO time with offset, default now), as its zone's clock reads them across daylight saving. 400 bad_request for a malformed query.",
    answer: { schema: JobsAnswer },
    refuses: ["app_not_found"],
    async handle({ env, params, c, now, query }) {
      const registry = appRegistry(env);
      if (!(await registry.get(params.name))) throw appNotFound(params.name);
      // The test build only: the injectable clock (X-Test-Now) drives the same fire the alarm runs.
      if (TEST_BUILD) {
        if (c.req.header("x-test-now") !== undefined) await registry.runDueJobs(now);
      }
      const jobs = await registry.jobs(params.name);
      if (query.count === undefined) return { jobs };
      const from = query.from === undefined ? now : Date.parse(query.from);
      return { jobs: jobs.map((job) => ({ ...job, upcoming: upcomingFires(job, from, query.count!) })) };
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
      return enableApp(req, req.params.name);
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
      return disableApp(req, req.params.name);
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
      return restartApp(req, req.params.name);
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
      "Updates an installed app from a folder (UPD-01..08). An update that changes nothing the owner consented to and scans clean needs no consent; otherwise 409 consent_required with the review and its changes until `consent` is the new digest. The old version is kept until the new backend answers its health check within its start timeout (the new manifest's `backend.startTimeoutSeconds`, 30 s unless set), else it is restored with its data and the answer says why (what the backend last answered its health check: status and first body line). An app that declares no storage (the row's `updateKeepsServing`) keeps answering from its old backend until the new one, started beside it, is healthy, and then switches to it; an app with storage does not serve from the stop before its data copy until then. 400 app_update_locked for a native app; 409 app_busy during another change.",
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
      return updateApp(req, req.params.name, {
        source: req.body.source,
        consent: req.body.consent,
        installId: req.body.install_id,
      });
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
      'Uninstalls an app: stops it, revokes its tokens, removes its files; data/ is kept unless the body is exactly {"purge_data": true}. Its secret assignments are taken back and answered in `secrets_taken_back` (the name it knew each by, the stored secret); the stored secrets themselves stay. All or nothing up to its files: its servers leave mcp.json, its jobs are removed, then the bridge runs its hook, stops it and removes its files, and only then is its record forgotten; a refusal before the files go (mcp.json unreadable, parked data in the way, the bridge unreachable) puts its servers and jobs back and leaves the app as it was. A native app is refused: disable it instead.',
    answer: {
      schema: z.strictObject({
        removed: z.string(),
        data_kept: z.boolean(),
        secrets_taken_back: z.array(z.strictObject({ as: z.string(), secret: z.string().nullable() })),
      }),
    },
    refuses: [
      "app_not_found",
      "app_locked",
      "app_busy",
      "parked_data_exists",
      "mcp_json_unreadable",
      "bridge_unavailable",
    ],
    async handle(req) {
      return uninstallApp(req, req.params.name, {
        purgeData: req.body.purge_data === true,
        installId: req.body.install_id,
      });
    },
  }),
];
