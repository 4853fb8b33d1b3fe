// The host bridge's calls back into the gateway about apps (internal-only rows, their bodies
// from GATEWAY_CALLBACKS and the bridge contract): which backends to start at gateway start, a
// backend's status, the settlement of a transition left half done, the locks of transitions the
// bridge settled, and the package's native apps. Each settles through workers/lifecycle/ or
// AppRegistry; no owner or app reaches them.
import { z } from "zod";
import { appRegistry } from "../../durable/instances";
import { emitEvent } from "../../durable/event-hub/emit";
import {
  BackendReportSchema,
  GATEWAY_CALLBACKS,
  JournalQuestionSchema,
  NativeAppsReportSchema,
} from "../../kernel/contracts/bridge-operations";
import { readRecord } from "../app-registry";
import { route } from "../route-row";
import { recordNativeApps } from "../lifecycle/native-apps";
import { releaseAbandonedTransitions } from "../lifecycle/transition-lock";
import { settleTransition } from "../lifecycle/transition-settlement";

const AnyObject = z.record(z.string(), z.unknown());
const Empty = z.object({}).strict();

export const appCallbackRoutes = [
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
      return settleTransition(req, req.params.name, req.body);
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
      return releaseAbandonedTransitions(req, req.body.name, req.body.takenBefore);
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
      return recordNativeApps(req, req.body.apps);
    },
  }),
];
