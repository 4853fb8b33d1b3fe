// App management (INST-*, ORIG-*, BACK lifecycle): preview, install, listing, enable,
// disable and uninstall are owner-only; an app may read its own row. The host bridge does
// the file and process work; AppRegistry holds the one record of each install.
import { z } from "zod";
import { GatewayError } from "../contracts/errors";
import { BackendStatusSchema, UiFilesSchema, type AppRecord } from "../contracts/app-record";
import { ParkedDataViewSchema } from "../contracts/parked-data";
import { AppManifestSchema, type AppManifest } from "../contracts/manifest";
import { appNotFound, appRegistry, readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { sessions } from "../sessions";
import { requireIfMatch } from "../contracts/revision";
import type { Env } from "../env";
import { route, type RouteRequest } from "./define";

const AbsoluteSource = z.string().min(1).max(4096);
const AnyObject = z.record(z.string(), z.unknown());
const PreviewBody = z.object({ source: AbsoluteSource }).strict();
const InstallBody = z
  .object({
    source: AbsoluteSource,
    consent: z.string().max(200).optional(),
    confirm: z.boolean().optional(),
    install_id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
    // Explicit consent to take over the data an earlier install of this name left parked.
    adopt_data: z.boolean().optional(),
  })
  .strict();
const InstallAnswer = z.object({ manifest: AnyObject, review: AnyObject, digest: z.string(), uiFiles: UiFilesSchema, adoptedData: ParkedDataViewSchema.nullable() });
const AppName = z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/).max(64);
const UninstallBody = z.object({ purge_data: z.boolean().optional() }).strict();
const Empty = z.object({}).strict();

function requireAbsolute(source: string): void {
  if (!source.startsWith("/") || source.includes("\0")) throw new GatewayError("app_source_invalid");
}

/** Runs `work`; a refusal becomes one security-log row naming its code, then is re-raised. */
async function auditedRefusal<T>(req: RouteRequest<unknown, unknown>, kind: string, subject: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GatewayError) {
      const detail = (error.detail ?? {}) as { path?: string; step?: string };
      await req.audit({ kind, outcome: "refused", subject, detail: { code: error.code, path: detail.path ?? null, step: detail.step ?? null } });
    }
    throw error;
  }
}


/**
 * Test runs only (TEST_HOOKS=1, like X-Test-Now): `X-Test-Fail: record` makes the record step
 * fail after the folder moved into place, to prove the install is undone.
 */
function injectedRecordFailure(req: RouteRequest<unknown, unknown>): void {
  if (req.env.TEST_HOOKS === "1" && req.c.req.header("x-test-fail") === "record") throw new Error("injected failure of the record step");
}

function uiRevisionOf(manifest: AppManifest, digest: string): string | null {
  return manifest.ui?.entry ? digest.replace(/^sha256:/, "").slice(0, 16) : null;
}

async function startBackend(env: Env, name: string, manifest: AppManifest): Promise<void> {
  if (!manifest.backend) return;
  await bridgeCall(env, "POST", "/backends/start", z.object({ started: z.boolean() }).passthrough(), { name, manifest }, 60_000);
}

export const appRoutes = [
  route({
    method: "POST",
    path: "/api/apps/preview",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: PreviewBody,
    contract: "Stages a folder in quarantine and answers its review and consent digest; installs nothing.",
    async handle(req) {
      requireAbsolute(req.body.source);
      return auditedRefusal(req, "app_preview_refused", req.body.source, () =>
        bridgeCall(req.env, "POST", "/apps/preview", z.object({ review: AnyObject, digest: z.string() }), { source: req.body.source }, 300_000),
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
    contract: "Installs a folder only if its staged bytes hash to `consent`; otherwise 409 consent_required with the current review. Nothing is installed on any failure.",
    async handle(req) {
      requireAbsolute(req.body.source);
      const registry = appRegistry(req.env);
      const takenNames = await registry.names();
      const installed = await auditedRefusal(req, "app_install_failed", req.body.source, () =>
        bridgeCall(
          req.env,
          "POST",
          "/apps/install",
          InstallAnswer,
          { source: req.body.source, consent: req.body.consent, takenNames, installId: req.body.install_id, adoptData: req.body.adopt_data === true },
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
          };
          injectedRecordFailure(req);
          added = await registry.add(record);
        } catch (error) {
          await bridgeCall(req.env, "POST", "/apps/install-undo", z.unknown(), { name, adoptedData: installed.adoptedData }, 60_000);
          throw error instanceof GatewayError
            ? error
            : new GatewayError("install_step_failed", { vars: { step: "record", reason: error instanceof Error ? error.message : String(error) }, detail: { step: "record" } });
        }
        if (!added) {
          await bridgeCall(req.env, "POST", "/apps/install-undo", z.unknown(), { name, adoptedData: installed.adoptedData }, 60_000);
          throw new GatewayError("app_exists", { vars: { name } });
        }
      });
      const manifest = AppManifestSchema.parse(installed.manifest);
      await req.audit({
        kind: "app_installed",
        outcome: "allowed",
        subject: manifest.name,
        detail: { consent: installed.digest, source: req.body.source, version: manifest.version, adopted_data: installed.adoptedData ? installed.adoptedData.version : null },
      });
      await startBackend(req.env, manifest.name, manifest);
      return { app: await registry.get(manifest.name), digest: installed.digest };
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/installs/:id",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    contract: "The steps of an install started with this install_id, as they happen (null when unknown).",
    async handle({ env, params }) {
      return bridgeCall(env, "POST", "/apps/install-progress", z.object({ steps: z.array(AnyObject).nullable() }), { id: params.id });
    },
  }),
  route({
    method: "GET",
    path: "/api/apps",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    contract: "Every installed app: name, display name, version, origin, resources, lifecycle, enabled, requires, native and backend.",
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
    contract: "The data/ folders keep-data uninstalls left parked: each with the name, version, consent digest and date of the install it came from.",
    async handle({ env }) {
      return bridgeCall(env, "POST", "/apps/parked", z.object({ parked: z.array(ParkedDataViewSchema) }));
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
    async handle(req) {
      const name = AppName.safeParse(req.params.name);
      if (!name.success) throw new GatewayError("parked_data_not_found", { vars: { name: req.params.name.slice(0, 80) } });
      const purged = await bridgeCall(req.env, "POST", "/apps/parked/purge", z.object({ purged: z.string() }), { name: name.data }, 60_000);
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
    contract: "One installed app's row, with its backend's running, healthy, pid, port, startedAt, restarts, lastLines and exit.",
    async handle({ env, params }) {
      const view = await appRegistry(env).get(params.name);
      if (!view) throw appNotFound(params.name);
      return view;
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/:name/config",
    family: "apps",
    authz: { kind: "app-may", why: "an app reads its own config", owns: "name" },
    internal: false,
    contract: "The app's own config document and its revision (send it back as If-Match to replace it).",
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
    contract: "Replaces the app's config as a whole: 428 revision_required without If-Match, 409 stale_write if it changed since read; nothing written then. Answers the new revision.",
    async handle(req) {
      const basedOn = requireIfMatch(req.c.req.header("if-match"));
      const result = await appRegistry(req.env).replaceConfig(req.params.name, basedOn, req.body.config);
      if (!result.ok && result.reason === "unknown_app") throw appNotFound(req.params.name);
      if (!result.ok) throw new GatewayError("stale_write");
      return { config: req.body.config, revision: result.revision };
    },
  }),
  route({
    method: "POST",
    path: "/api/apps/:name/enable",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract: "Turns an app on and starts its backend.",
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      const view = await appRegistry(req.env).setEnabled(record.name, true);
      await req.audit({ kind: "app_enabled", outcome: "allowed", subject: record.name });
      await startBackend(req.env, record.name, record.manifest);
      return { app: (await appRegistry(req.env).get(record.name)) ?? view };
    },
  }),
  route({
    method: "POST",
    path: "/api/apps/:name/disable",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract: "Turns an app off: revokes its tokens and stops its backend (C-22).",
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      await appRegistry(req.env).setEnabled(record.name, false);
      const revoked = await sessions(req.env).revokeApp(record.name, req.now);
      if (record.manifest.backend) await bridgeCall(req.env, "POST", "/backends/stop", z.unknown(), { name: record.name }, 30_000);
      await req.audit({ kind: "app_disabled", outcome: "allowed", subject: record.name, detail: { tokens_revoked: revoked } });
      return { app: await appRegistry(req.env).get(record.name) };
    },
  }),
  route({
    method: "DELETE",
    path: "/api/apps/:name",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    body: UninstallBody,
    contract: "Uninstalls an app: stops it, revokes its tokens, removes its files; data/ is kept unless the body is exactly {\"purge_data\": true}. A native app is refused: disable it instead.",
    async handle(req) {
      const record = await requireRecord(req.env, req.params.name);
      if (record.lifecycle === "locked") throw new GatewayError("app_locked", { vars: { name: record.name } });
      const purgeData = req.body.purge_data === true;
      const removed = await bridgeCall(
        req.env,
        "POST",
        "/apps/remove",
        z.object({ uninstallHook: z.string().nullable() }).passthrough(),
        { name: record.name, purgeData, manifest: record.manifest, version: record.version, consentDigest: record.consentDigest },
        120_000,
      );
      await appRegistry(req.env).remove(record.name);
      await sessions(req.env).revokeApp(record.name, req.now);
      await req.audit({ kind: "app_uninstalled", outcome: "allowed", subject: record.name, detail: { purge_data: purgeData, uninstall_hook: removed.uninstallHook } });
      return { removed: record.name, data_kept: !purgeData };
    },
  }),
  route({
    method: "GET",
    path: "/api/internal/apps/startable",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    contract: "The enabled apps with a backend, for the host bridge to start at gateway start.",
    async handle({ env }) {
      const names = await appRegistry(env).names();
      const apps = [];
      for (const name of names) {
        const record = await readRecord(env, name);
        if (record?.enabled && record.manifest.backend) apps.push({ name, manifest: record.manifest });
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
    body: z.object({ status: BackendStatusSchema, secret: z.string().max(200).nullable() }).strict(),
    contract: "The host bridge reports a backend's status and its current proxy secret.",
    async handle({ env, params, body }) {
      const known = await appRegistry(env).setBackend(params.name, body.status, body.secret ?? undefined);
      return { known };
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
    body: z.object({ apps: z.array(z.object({ digest: z.string().max(200), source: z.string().max(4096) }).strict()).max(100) }).strict(),
    contract: "Records the package's native apps as origin builtin, lifecycle locked, keeping the owner's on/off. Each must be one the host bridge staged from the package's own apps/native/ at this start, with that digest (403 native_app_unproven otherwise); the manifest comes from the bridge, never from the caller.",
    async handle(req) {
      const registry = appRegistry(req.env);
      for (const entry of req.body.apps) {
        // A stolen internal credential must not be able to make an app unremovable: the bridge
        // proves by path and digest that it staged this app from apps/native/ itself.
        const proof = await auditedRefusal(req, "app_native_refused", entry.source, () =>
          bridgeCall(req.env, "POST", "/apps/native/verify", z.object({ manifest: AnyObject, digest: z.string(), uiFiles: UiFilesSchema }), entry),
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
        if (!existing) await req.audit({ kind: "app_installed", outcome: "allowed", subject: manifest.name, detail: { origin: "builtin", consent: entry.digest } });
      }
      return { synced: req.body.apps.length };
    },
  }),
];
