// App management (INST-*, ORIG-*, BACK lifecycle): preview, install, listing, enable,
// disable and uninstall are owner-only; an app may read its own row. The host bridge does
// the file and process work; AppRegistry holds the one record of each install.
import { z } from "zod";
import { GatewayError } from "../contracts/errors";
import { BackendStatusSchema, type AppRecord } from "../contracts/app-record";
import { AppManifestSchema, type AppManifest } from "../contracts/manifest";
import { appNotFound, appRegistry, readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { sessions } from "../sessions";
import { requireIfMatch } from "../contracts/revision";
import type { Env } from "../env";
import { route, type RouteRequest } from "./define";

const AbsoluteSource = z.string().min(1).max(4096);
const PreviewBody = z.object({ source: AbsoluteSource }).strict();
const InstallBody = z
  .object({
    source: AbsoluteSource,
    consent: z.string().max(200).optional(),
    confirm: z.boolean().optional(),
    install_id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
  })
  .strict();
const UninstallBody = z.object({ purge_data: z.boolean().optional() }).strict();
const Empty = z.object({}).strict();
const AnyObject = z.record(z.string(), z.unknown());

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
          z.object({ manifest: AnyObject, review: AnyObject, digest: z.string() }),
          { source: req.body.source, consent: req.body.consent, takenNames, installId: req.body.install_id },
          900_000,
        ),
      );
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
      };
      if (!(await registry.add(record))) {
        await bridgeCall(req.env, "POST", "/apps/remove", z.unknown(), { name: manifest.name, purgeData: true });
        throw new GatewayError("app_exists", { vars: { name: manifest.name } });
      }
      await req.audit({ kind: "app_installed", outcome: "allowed", subject: manifest.name, detail: { consent: installed.digest, source: req.body.source, version: manifest.version } });
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
      const removed = await bridgeCall(req.env, "POST", "/apps/remove", z.object({ uninstallHook: z.string().nullable() }).passthrough(), { name: record.name, purgeData, manifest: record.manifest }, 120_000);
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
    body: z.object({ apps: z.array(z.object({ manifest: AnyObject, digest: z.string(), source: z.string() }).strict()).max(100) }).strict(),
    contract: "Records the package's native apps as origin builtin, lifecycle locked, keeping the owner's on/off.",
    async handle(req) {
      const registry = appRegistry(req.env);
      for (const entry of req.body.apps) {
        const manifest = AppManifestSchema.parse(entry.manifest);
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
        };
        await registry.replace(record);
        if (!existing) await req.audit({ kind: "app_installed", outcome: "allowed", subject: manifest.name, detail: { origin: "builtin", consent: entry.digest } });
      }
      return { synced: req.body.apps.length };
    },
  }),
];
