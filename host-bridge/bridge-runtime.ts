// The host bridge's work for a running gateway: installs, native apps and app backends, and
// the internal operations the gateway calls. The gateway holds every record; the bridge
// holds bytes and processes, and reports backend changes back through internal routes.
import { homedir } from "node:os";
import { existsSync, readdirSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { GatewayError } from "../workers/contracts/errors";
import { CORE_FEATURES } from "../workers/contracts/core";
import type { AppManifest } from "../workers/contracts/manifest";
import { reservedAppNames } from "./reserved-app-names";
import type { BridgeOperation, BridgeRefusal } from "./server";
import { previewBundle, type PreviewOptions } from "./install/preview";
import { installApp, removeAppFiles, undoInstall } from "./install/install-app";
import { commitUpdate, undoUpdate, updateApp, updateNeedsConsent, type BackendControl } from "./install/update-app";
import { clearJournal, readJournal, writeJournal, type Journal } from "./install/transition-journal";
import { recoverTransitions, JournalVerdictSchema, type PendingRecovery } from "./install/recover-transitions";
import type { InstallReview } from "./install/review";
import { pauseAtNamedStep } from "./install/test-pause";
import { listParkedData, parkedDataDir, purgeParkedData } from "./install/parked-data";
import { listUiFiles } from "./install/ui-files";
import { ParkedDataViewSchema } from "../workers/contracts/parked-data";
import { uiFolderOf } from "../workers/contracts/manifest";
import { venvPython } from "./install/install-dependencies";
import { runHook } from "./install/run-hook";
import { sandboxAvailability, type SandboxAvailability } from "./sandbox/bubblewrap";
import { boundsAvailability, removeStaleGroups, type BoundsAvailability } from "./sandbox/bounds";
import { EgressBrokers } from "./egress/brokers";
import type { EgressDecision } from "./egress/broker";
import { grantPatterns, type HostPattern } from "../workers/contracts/network-grant";
import { BackendSupervisor, type BackendStatus } from "./supervisor/backend-supervisor";
import { readAnchor } from "./sel-anchor";
import type { HomePaths } from "./home";
import { childLimits, readOwnerConfig, settingsDocument, writeOwnerSetting, type OwnerConfig } from "./owner-config";
import { SettingWriteSchema } from "../workers/contracts/owner-settings";
import { SecretStore, secretStorePaths } from "./secrets/secret-store";
import {
  SecretAssignRequestSchema,
  SecretDeleteRequestSchema,
  SecretRebindRequestSchema,
  SecretStoreRequestSchema,
  SecretUnassignRequestSchema,
} from "../workers/contracts/secrets";
import { McpJson } from "./mcp/mcp-json";
import { APP_NAME_PATTERN } from "../workers/contracts/app-name";

export interface BridgeRuntimeOptions {
  paths: HomePaths;
  /** The runtime folder (runtimeDir()): slot sockets and egress broker sockets. */
  runtimeDir: string;
  /** The gateway's port; backends get it as PERSONALCLAW_PORT to call back. */
  gatewayPort: number;
  packageRoot: string;
  version: string;
  config: OwnerConfig;
  parentEnv: Readonly<Record<string, string | undefined>>;
  skipBackends: boolean;
  /** Seconds an install or uninstall hook may run (PERSONALCLAW_HOOK_TIMEOUT_S). */
  hookTimeoutSeconds: number;
  log: (line: string) => void;
  /** Calls the gateway's internal routes as the bridge. */
  callGateway: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
}

const SourceSchema = z.object({ source: z.string().min(1).max(4096) });
const PreviewSchema = SourceSchema.extend({ installedReview: z.record(z.string(), z.unknown()).nullable().optional() });
const InstallSchema = SourceSchema.extend({
  consent: z.string().max(200).optional(),
  takenNames: z.array(z.string()).max(10_000),
  installId: z.string().max(100).optional(),
  adoptData: z.boolean().optional(),
});
const NameSchema = z.object({ name: z.string().regex(APP_NAME_PATTERN) });
// The consent digest binds the app's secrets to this install: without it none is opened.
const StartSchema = NameSchema.extend({
  manifest: z.record(z.string(), z.unknown()),
  digest: z.string().max(200).optional(),
});
const RemoveSchema = NameSchema.extend({
  purgeData: z.boolean(),
  manifest: z.record(z.string(), z.unknown()).optional(),
  version: z.string().max(64),
  consentDigest: z.string().max(200),
  installId: z.string().max(100).optional(),
});
const UndoSchema = NameSchema.extend({ adoptedData: ParkedDataViewSchema.nullable() });
const InstalledCopySchema = z.object({
  manifest: z.record(z.string(), z.unknown()),
  review: z.record(z.string(), z.unknown()).nullable(),
  digest: z.string().max(200),
  enabled: z.boolean(),
});
const UpdateSchema = NameSchema.extend({
  source: z.string().min(1).max(4096),
  consent: z.string().max(200).optional(),
  installed: InstalledCopySchema,
  installId: z.string().max(100).optional(),
});
const UpdateUndoSchema = NameSchema.extend({ installed: InstalledCopySchema });
const NativeProofSchema = z.object({ source: z.string().min(1).max(4096), digest: z.string().max(200) });
const McpRegisterSchema = NameSchema.extend({
  manifest: z.record(z.string(), z.unknown()),
  off: z.array(z.string().max(64)).max(512),
  previousManifest: z.record(z.string(), z.unknown()).optional(),
});
const McpDeregisterSchema = NameSchema.extend({ manifest: z.record(z.string(), z.unknown()) });
const McpFlagSchema = z.object({ key: z.string().min(3).max(140), enabled: z.boolean() });

/** What the bridge staged from the package's own apps/native/ at this start: the only apps the gateway may record as native. */
interface NativeProof {
  manifest: AppManifest;
  digest: string;
  uiFiles: Record<string, string>;
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new GatewayError("bad_request", {
      vars: { reason: `${parsed.error.issues[0].path.join(".")} ${parsed.error.issues[0].message}` },
    });
  return parsed.data;
}

function refusalError(refusal: {
  code: string;
  message: string;
  path?: string;
  field?: string;
  detail?: unknown;
}): GatewayError {
  return GatewayError.fromEnvelope(
    refusal.code,
    refusal.message,
    { path: refusal.path, field: refusal.field, ...(refusal.detail as object | undefined) },
    422,
  );
}

/** What the gateway is asked about a journal: the record decides whether the transition stands. */
function journalQuestion(journal: Journal): Record<string, unknown> {
  if (journal.op === "install") return { op: "install", digest: journal.digest };
  if (journal.op === "update") return { op: "update", fromDigest: journal.fromDigest, toDigest: journal.toDigest };
  return { op: "uninstall", consentDigest: journal.consentDigest };
}

/** What an app backend is told to run: `python`/`python3` means the app's own venv when it has one. */
export function backendCommand(
  appDir: string,
  manifest: AppManifest,
): { command: string; args: string[]; healthCheck?: string } {
  const backend = manifest.backend!;
  const usesVenv = (backend.command === "python" || backend.command === "python3") && existsSync(venvPython(appDir));
  return {
    command: usesVenv ? venvPython(appDir) : backend.command,
    args: [...(backend.args ?? [])],
    healthCheck: backend.healthCheck,
  };
}

/** What the bridge tells the gateway about one app's backend (POST /api/internal/apps/:name/backend). */
interface BackendReport {
  status: Omit<BackendStatus, "held" | "name">;
  secret: string | null;
}

export class BridgeRuntime {
  readonly supervisor: BackendSupervisor;
  private sandbox: SandboxAvailability = { ok: false, reason: "not probed yet" };
  private readonly bounds: BoundsAvailability;
  private readonly egress: EgressBrokers;
  private readonly reports = new Map<string, { next: BackendReport | null; drained: Promise<void> }>();
  private progress = new Map<string, Array<Record<string, unknown>>>();
  private pendingRows: Array<{ kind: string; outcome: "allowed" | "refused" | "info"; subject: string }> = [];
  private readonly previewOptions: PreviewOptions;
  private readonly nativeProofs = new Map<string, NativeProof>();
  /** Each app's consent digest as the gateway last named it: the binding its secrets open under. */
  private readonly digests = new Map<string, string>();
  private recovery: PendingRecovery | null = null;
  readonly secrets: SecretStore;
  private readonly mcpJson: McpJson;

  constructor(private readonly opts: BridgeRuntimeOptions) {
    this.secrets = new SecretStore(secretStorePaths(opts.paths.home));
    this.mcpJson = new McpJson(opts.paths.mcpJson, {
      cli: join(opts.packageRoot, "bin", "personalclaw.mjs"),
      home: opts.paths.home,
    });
    this.previewOptions = {
      quarantineRoot: opts.paths.quarantine,
      reservedNames: reservedAppNames(opts.packageRoot),
      core: { version: opts.version, features: CORE_FEATURES },
      hookTimeoutSeconds: opts.hookTimeoutSeconds,
      appsDir: opts.paths.apps,
    };
    const preferred = opts.config.sandbox.bounds;
    this.bounds = boundsAvailability(opts.parentEnv.PATH, preferred === "auto" ? undefined : preferred);
    this.egress = new EgressBrokers(opts.runtimeDir, (decision) => void this.auditEgress(decision));
    this.supervisor = new BackendSupervisor({
      home: opts.paths.home,
      runtimeDir: opts.runtimeDir,
      egress: this.egress,
      ownerHome: homedir(),
      sandbox: { mode: opts.config.sandbox.mode },
      gatewayPort: opts.gatewayPort,
      bounds: this.bounds,
      limits: childLimits(opts.config),
      onLimit: (name, hit, limits) =>
        void this.audit({
          kind: "app_limit_reached",
          outcome: "refused",
          subject: name,
          detail: { limit: hit, processes: limits.processes, memory_bytes: limits.memoryBytes },
        }),
      parentEnv: opts.parentEnv,
      passthrough: opts.config.sandbox.env_passthrough,
      onChange: (name, status) => void this.report(name, status),
      log: (level, line) => opts.log(`${level} ${line}`),
    });
  }

  /** Probes bubblewrap once and ends backends a previous bridge left orphaned. */
  async prepare(): Promise<void> {
    // First: journals a killed gateway left are finished or undone, the quarantine emptied.
    this.recovery = await recoverTransitions({
      home: this.opts.paths.home,
      appsDir: this.opts.paths.apps,
      quarantine: this.opts.paths.quarantine,
      log: this.opts.log,
    });
    this.sandbox = await sandboxAvailability(this.opts.parentEnv.PATH);
    this.opts.log(`bridge: app children are bounded by ${this.bounds.mechanism}: ${this.bounds.description}`);
    const staleGroups = removeStaleGroups(this.bounds);
    if (staleGroups.length > 0)
      this.opts.log(`bridge: removed ${staleGroups.length} cgroup(s) a previous bridge left behind`);
    const reaped = await this.supervisor.reapOrphans();
    this.opts.log(`bridge: orphan sweep ${JSON.stringify(reaped)}`);
    // The gateway is not up yet: these rows are written once it is (startEnabledBackends).
    for (const name of reaped.killed)
      this.pendingRows.push({ kind: "backend_orphan_killed", outcome: "allowed", subject: name });
  }

  /**
   * Writes a refusal of the bridge's own API to the security log (never the presented
   * secret). The log counts identical refusals (same code and group) in one row, the rule
   * the gateway's own refusals follow, so a process hammering the port cannot flood it.
   */
  auditRefusal(code: BridgeRefusal, subject: string, group: string): void {
    void this.audit({ kind: `bridge_${code}`, outcome: "refused", subject, group });
  }

  /**
   * Each egress decision is a row under the app's name, counted per host in windows like any
   * refusal (refusal-windows.ts), so a chatty app does not drown the log.
   */
  private auditEgress(decision: EgressDecision): Promise<void> {
    const target = `${decision.host}:${decision.port}`;
    return this.audit({
      kind: decision.outcome === "allowed" ? "egress_allowed" : (decision.code ?? "egress_refused"),
      outcome: decision.outcome,
      principal: `app:${decision.app}`,
      subject: target,
      group: target,
      detail: {
        ...(decision.address ? { address: decision.address } : {}),
        ...(decision.reason ? { reason: decision.reason } : {}),
      },
    });
  }

  /** Appends a security-log row as the bridge's own work. */
  private async audit(row: {
    kind: string;
    outcome: "allowed" | "refused" | "info";
    subject: string;
    detail?: Record<string, unknown>;
    principal?: string;
    group?: string;
  }): Promise<void> {
    await this.opts
      .callGateway("POST", "/api/internal/sel/append", { principal: "internal:bridge", detail: {}, ...row })
      .catch((error) => {
        this.opts.log(
          `bridge: could not write a security-log row: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
  }

  private report(name: string, status: BackendStatus): Promise<void> {
    const { held: _held, name: _name, ...view } = status;
    return this.sendReport(name, { status: view, secret: this.supervisor.secretOf(name) });
  }

  /**
   * One report per app in flight, and only the newest one waiting. Reports sent side by side
   * can reach the registry out of order, and a stale "not healthy yet" landing after "healthy"
   * would leave the proxy answering 503 to a healthy backend (nothing re-reports a steady state).
   * Resolves once the newest report queued so far has been sent.
   */
  private sendReport(name: string, body: BackendReport): Promise<void> {
    const queued = this.reports.get(name);
    if (queued) {
      queued.next = body;
      return queued.drained;
    }
    const entry: { next: BackendReport | null; drained: Promise<void> } = { next: body, drained: Promise.resolve() };
    this.reports.set(name, entry);
    entry.drained = (async () => {
      while (entry.next) {
        const next = entry.next;
        entry.next = null;
        await this.opts.callGateway("POST", `/api/internal/apps/${name}/backend`, next).catch((error) => {
          this.opts.log(
            `bridge: could not report ${name}'s backend: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
      }
      this.reports.delete(name);
    })();
    return entry.drained;
  }

  private hookContext() {
    return {
      home: this.opts.paths.home,
      ownerHome: homedir(),
      sandboxMode: this.opts.config.sandbox.mode,
      sandbox: this.sandbox,
      bounds: this.bounds,
      limits: childLimits(this.opts.config),
      egress: this.egress,
      parentEnv: this.opts.parentEnv,
      passthrough: this.opts.config.sandbox.env_passthrough,
      log: this.opts.log,
      appsDir: this.opts.paths.apps,
      preview: this.previewOptions,
    };
  }

  /**
   * The progress list of a transition the caller named, and the sink that fills it (in the test
   * build, also where a transition can be paused: install/test-pause.ts).
   */
  private progressSink(
    op: string,
    id: string | undefined,
  ): (event: { step: string; status: string; at: string; message?: string }) => Promise<void> {
    const events: Array<Record<string, unknown>> = [];
    if (id) this.progress.set(id, events);
    return async (event) => {
      events.push({ op, ...event });
      // Live progress for the owner's sockets: identifiers only, and advisory (the list above is what the dashboard reads back).
      if (id) {
        void this.opts
          .callGateway("POST", "/api/internal/events/install-progress", {
            install_id: id,
            op,
            step: event.step,
            status: event.status,
          })
          .catch((error) => {
            this.opts.log(
              `bridge: could not announce install progress: ${error instanceof Error ? error.message : String(error)}`,
            );
          });
      }
      if (TEST_BUILD)
        await pauseAtNamedStep(this.opts.paths.home, `${op}:${event.step}:${event.status}`, this.opts.log);
    };
  }

  private backendControl(): BackendControl {
    return {
      stop: (name) => this.stopBackend(name),
      start: async (name, manifest) => {
        await this.startBackend(name, manifest, this.digests.get(name));
      },
      startHealthy: async (name, manifest, timeoutMs) => {
        const started = await this.startBackend(name, manifest, this.digests.get(name));
        if (!started.started) return { ok: false, reason: started.reason ?? "it did not start" };
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const status = this.supervisor.status(name);
          if (status?.healthy) return { ok: true };
          if (status && !status.running && status.exit) {
            return {
              ok: false,
              reason: `its backend ${status.exit.signal ? `was killed by ${status.exit.signal}` : `exited with code ${status.exit.code}`} before it answered its health check`,
            };
          }
          if (Date.now() >= deadline)
            return {
              ok: false,
              reason: `its backend did not answer its health check within ${Math.round(timeoutMs / 1000)} s`,
            };
          await new Promise((r) => setTimeout(r, 50));
        }
      },
    };
  }

  /**
   * The secrets the owner assigned to this install, opened for its start. A copy that does not
   * open for exactly this app and consent digest is left out, and is a security-log row.
   */
  private async secretsFor(
    name: string,
    manifest: AppManifest,
    digest: string | undefined,
  ): Promise<Record<string, string>> {
    const declared = (manifest.secrets ?? []).map((s) => s.name);
    if (declared.length === 0 || digest === undefined) return {};
    let opened: { env: Record<string, string>; refused: string[] };
    try {
      opened = this.secrets.openAppSecrets({ app: name, digest }, declared);
    } catch (error) {
      this.opts.log(
        `bridge: ${name}'s secrets could not be opened: ${error instanceof Error ? error.message : String(error)}`,
      );
      return {};
    }
    for (const as of opened.refused) {
      this.opts.log(
        `bridge: ${name}'s secret ${as} was not given to it: its sealed copy is not bound to this app and install`,
      );
      await this.audit({
        kind: "secret_binding_refused",
        outcome: "refused",
        subject: name,
        principal: "internal:bridge",
        detail: { name: as },
      });
    }
    return opened.env;
  }

  async startBackend(
    name: string,
    manifest: AppManifest,
    digest?: string,
  ): Promise<{ started: boolean; reason?: string; code?: string }> {
    if (!manifest.backend) return { started: false, reason: "the app has no backend" };
    if (this.opts.skipBackends) return { started: false, reason: "PERSONALCLAW_SKIP_APP_BACKENDS=1" };
    const appDir = join(this.opts.paths.apps, name);
    // Enabling an app whose backend already runs changes nothing: its current status is reported again.
    const current = this.supervisor.status(name);
    if (current?.running) {
      await this.report(name, current);
      return { started: true, reason: "already running" };
    }
    const network = this.networkOf(name, manifest);
    // The owner's explicit widening is evidence every time it takes effect.
    if (network === "all")
      await this.audit({
        kind: "app_network_all",
        outcome: "info",
        subject: name,
        detail: { setting: "sandbox.network_all" },
      });
    const result = await this.supervisor.start({
      name,
      appDir,
      dataDir: join(appDir, "data"),
      hasStorage: manifest.permissions?.storage === true,
      backend: backendCommand(appDir, manifest),
      network,
      secrets: await this.secretsFor(name, manifest, digest),
    });
    if (!result.ok) {
      this.opts.log(`bridge: ${name}'s backend did not start: ${result.code} ${result.reason}`);
      await this.audit({
        kind: "backend_start_refused",
        outcome: "refused",
        subject: name,
        detail: { code: result.code },
      });
      await this.sendReport(name, {
        status: {
          running: false,
          healthy: false,
          pid: null,
          port: null,
          slot: null,
          startedAt: null,
          restarts: 0,
          lastLines: [],
          exit: null,
          reason: `${result.code}: ${result.reason}`,
        },
        secret: null,
      });
      return { started: false, reason: result.reason, code: result.code };
    }
    await this.report(name, this.supervisor.status(name)!);
    return { started: true };
  }

  /** The hosts an app's backend may reach: its consented grant, or any public host when the owner set it so in config.json. */
  private networkOf(name: string, manifest: AppManifest): readonly HostPattern[] | "all" {
    if (this.opts.config.sandbox.network_all.includes(name)) return "all";
    return grantPatterns(manifest.permissions?.network);
  }

  /**
   * Tells a restarted workerd what every backend is doing: its registry starts with no
   * backend running, and a steady state is never re-reported on its own.
   */
  async reportAllBackends(): Promise<void> {
    await Promise.all(this.supervisor.names().map((name) => this.report(name, this.supervisor.status(name)!)));
    await this.opts.callGateway("POST", "/api/internal/apps/backends-reported", {});
  }

  async stopBackend(name: string): Promise<void> {
    this.supervisor.hold(name);
    await this.supervisor.stop(name);
    this.supervisor.release(name);
  }

  /** Starts the backend of every enabled app the gateway's registry holds. */
  async startEnabledBackends(): Promise<void> {
    for (const row of this.pendingRows.splice(0)) await this.audit(row);
    // The journals whose outcome the record decides are settled before any backend starts.
    await this.recovery?.settle(async (journal) => {
      const answer = await this.opts.callGateway(
        "POST",
        `/api/internal/apps/${journal.name}/journal`,
        journalQuestion(journal),
      );
      const verdict = JournalVerdictSchema.safeParse(answer.body);
      if (answer.status !== 200 || !verdict.success) throw new Error(`the gateway answered ${answer.status}`);
      return verdict.data.outcome;
    });
    this.recovery = null;
    const answer = await this.opts.callGateway("GET", "/api/internal/apps/startable");
    const apps = (answer.body?.apps ?? []) as Array<{ name: string; manifest: AppManifest; digest?: string }>;
    await Promise.all(apps.map((app) => this.startBackend(app.name, app.manifest, app.digest)));
    await this.opts.callGateway("POST", "/api/internal/apps/backends-reported", {});
  }

  /**
   * Native apps ship in the package's apps/native/: seeded on first start and their files
   * re-synced at every start, never touching data/ (ORIG-04). The gateway records them as
   * origin builtin, lifecycle locked.
   */
  async syncNativeApps(): Promise<void> {
    const nativeRoot = join(this.opts.packageRoot, "apps", "native");
    const records: Array<{ digest: string; source: string }> = [];
    for (const entry of existsSync(nativeRoot) ? readdirSync(nativeRoot, { withFileTypes: true }) : []) {
      if (!entry.isDirectory()) continue;
      const source = join(nativeRoot, entry.name);
      const staged = await previewBundle(source, { ...this.previewOptions, fromNativeFolder: true, keepStaged: true });
      if (!staged.ok) {
        this.opts.log(`bridge: native app ${entry.name} refused: ${staged.code} ${staged.message}`);
        continue;
      }
      const uiFolder = uiFolderOf(staged.manifest);
      const listed =
        uiFolder === null ? { ok: true as const, files: {} } : await listUiFiles(staged.stagedDir!, uiFolder);
      if (!listed.ok) {
        this.opts.log(`bridge: native app ${entry.name} refused: ${listed.code} ${listed.message}`);
        await rm(staged.stagedDir!, { recursive: true, force: true });
        continue;
      }
      const appDir = join(this.opts.paths.apps, staged.manifest.name);
      const previous = `${appDir}.previous-${process.pid}`;
      if (existsSync(appDir)) {
        await rename(appDir, previous);
        if (existsSync(join(previous, "data"))) await rename(join(previous, "data"), join(staged.stagedDir!, "data"));
      }
      await rename(staged.stagedDir!, appDir);
      await rm(previous, { recursive: true, force: true });
      this.nativeProofs.set(source, { manifest: staged.manifest, digest: staged.digest, uiFiles: listed.files });
      records.push({ digest: staged.digest, source });
    }
    await this.opts.callGateway("POST", "/api/internal/apps/native", { apps: records });
  }

  /** The bridge's internal operations, each one (method, path) matched whole. */
  operations(): Map<string, BridgeOperation> {
    const ops = new Map<string, BridgeOperation>();
    ops.set("GET /sel/anchor", async () => readAnchor(this.opts.paths.selAnchor));
    ops.set("POST /apps/preview", async ({ body }) => {
      const { source, installedReview } = parse(PreviewSchema, body);
      const result = await previewBundle(source, this.previewOptions);
      if (!result.ok) throw refusalError(result);
      if (installedReview === undefined) return { review: result.review, digest: result.digest };
      // Previewed as an update: what changes against the review the owner consented to.
      const { needed, changes } = updateNeedsConsent(installedReview as unknown as InstallReview | null, result.review);
      return { review: result.review, digest: result.digest, changes, consentNeeded: needed };
    });
    ops.set("POST /apps/install", async ({ body }) => {
      const request = parse(InstallSchema, body);
      const installed = await installApp(
        request.source,
        request.consent,
        new Set(request.takenNames),
        this.hookContext(),
        this.progressSink("install", request.installId),
        {
          adoptData: request.adoptData === true,
        },
      );
      return {
        manifest: installed.manifest,
        review: installed.review,
        digest: installed.digest,
        uiFiles: installed.uiFiles,
        adoptedData: installed.adoptedData,
      };
    });
    // The gateway could not record an install that moved into place: undo it, freeing the name.
    ops.set("POST /apps/install-undo", async ({ body }) => {
      const { name, adoptedData } = parse(UndoSchema, body);
      await this.stopBackend(name);
      await undoInstall(this.opts.paths.apps, name, adoptedData);
      await clearJournal(this.opts.paths.home, name);
      return { undone: true };
    });
    // The gateway recorded the transition: its journal (and an update's kept old version) go.
    ops.set("POST /apps/transition-commit", async ({ body }) => {
      const { name } = parse(NameSchema, body);
      const journal = await readJournal(this.opts.paths.home, name);
      await this.progressSink(
        journal?.op ?? "transition",
        undefined,
      )({ step: "commit", status: "started", at: new Date().toISOString() });
      if (journal?.op === "update") await commitUpdate(this.opts.paths.home, this.opts.paths.apps, name);
      else await clearJournal(this.opts.paths.home, name);
      return { committed: true };
    });
    ops.set("POST /apps/update", async ({ body }) => {
      const request = parse(UpdateSchema, body);
      const installed = {
        ...request.installed,
        manifest: request.installed.manifest as AppManifest,
        review: request.installed.review as unknown as InstallReview | null,
      };
      const updated = await updateApp(
        request.name,
        request.source,
        request.consent,
        installed,
        this.hookContext(),
        this.backendControl(),
        this.progressSink("update", request.installId),
      );
      return {
        manifest: updated.manifest,
        review: updated.review,
        digest: updated.digest,
        uiFiles: updated.uiFiles,
        changes: updated.changes,
        venvMoved: updated.venvMoved,
      };
    });
    // The gateway could not record an update that swapped: the old version comes back.
    ops.set("POST /apps/update-undo", async ({ body }) => {
      const { name, installed } = parse(UpdateUndoSchema, body);
      await undoUpdate(
        this.opts.paths.home,
        this.opts.paths.apps,
        name,
        { ...installed, manifest: installed.manifest as AppManifest, review: null },
        this.backendControl(),
      );
      return { undone: true };
    });
    ops.set("POST /apps/parked", async () => ({ parked: await listParkedData(this.opts.paths.apps) }));
    ops.set("POST /apps/parked/purge", async ({ body }) => {
      const { name } = parse(NameSchema, body);
      await purgeParkedData(this.opts.paths.apps, name);
      return { purged: name };
    });
    // Proof by path and digest: only what this start itself staged from the package's own
    // apps/native/ folder may be recorded as a locked native app (issue 11 item 8).
    ops.set("POST /apps/native/verify", async ({ body }) => {
      const { source, digest } = parse(NativeProofSchema, body);
      const proof = this.nativeProofs.get(source);
      if (!proof || proof.digest !== digest)
        throw new GatewayError("native_app_unproven", { vars: { source: source.slice(0, 300) } });
      return proof;
    });
    ops.set("POST /apps/install-progress", async ({ body }) => {
      const { id } = parse(z.object({ id: z.string().max(100) }), body);
      return { steps: this.progress.get(id) ?? null };
    });
    ops.set("POST /apps/remove", async ({ body }) => {
      const { name, purgeData, manifest, version, consentDigest, installId } = parse(RemoveSchema, body);
      const note = this.progressSink("uninstall", installId);
      // Checked before anything is torn down: parking over an earlier install's data would destroy it.
      if (
        !purgeData &&
        existsSync(join(this.opts.paths.apps, name, "data")) &&
        existsSync(parkedDataDir(this.opts.paths.apps, name))
      ) {
        throw new GatewayError("parked_data_exists", { vars: { name } });
      }
      // Teardown order (UNIN-02): the uninstall hook, then the backend, then the files.
      const hook = (manifest as AppManifest | undefined)?.setup?.onUninstall;
      const appDir = join(this.opts.paths.apps, name);
      let hookResult: string | null = null;
      await note({ step: "uninstall_hook", status: hook ? "started" : "skipped", at: new Date().toISOString() });
      if (hook && existsSync(appDir)) {
        const ctx = this.hookContext();
        const result = await runHook(
          hook,
          {
            name,
            appDir,
            dataDir: join(appDir, "data"),
            hasStorage: (manifest as AppManifest).permissions?.storage === true,
          },
          ctx,
          this.opts.hookTimeoutSeconds,
          {
            KEEP_DATA: purgeData ? "0" : "1",
            PURGE_DATA: purgeData ? "1" : "0",
          },
        );
        hookResult = result.ok ? "ok" : result.reason;
        if (!result.ok) this.opts.log(`bridge: ${name}'s uninstall hook failed (${result.reason}); removing it anyway`);
      }
      await note({ step: "stop_backend", status: "started", at: new Date().toISOString() });
      await this.stopBackend(name);
      // The journal before the folder leaves: the next start finishes a removal a crash cut short.
      const trashDir = join(this.opts.paths.quarantine, `${name}.removing-${Date.now()}`);
      await writeJournal(this.opts.paths.home, {
        op: "uninstall",
        name,
        purgeData,
        version,
        consentDigest,
        trashDir,
        startedAt: new Date().toISOString(),
      });
      await note({ step: "remove_files", status: "started", at: new Date().toISOString() });
      await removeAppFiles(this.opts.paths.apps, name, purgeData, { version, consentDigest }, trashDir);
      // Its sealed copies of the owner's secrets go with it; the owner's own stored copies stay.
      this.secrets.forgetApp(name);
      this.digests.delete(name);
      await note({ step: "remove_files", status: "done", at: new Date().toISOString() });
      return { removed: true, uninstallHook: hookResult };
    });
    // <home>/mcp.json (docs/mcp-servers.md): the gateway names the app and its manifest; the
    // bridge writes exactly the entries that manifest declares.
    ops.set("POST /mcp/register", async ({ body }) => {
      const { name, manifest, off, previousManifest } = parse(McpRegisterSchema, body);
      return this.mcpJson.register(name, manifest as AppManifest, off, previousManifest as AppManifest | undefined);
    });
    ops.set("POST /mcp/deregister", async ({ body }) => {
      const { name, manifest } = parse(McpDeregisterSchema, body);
      return this.mcpJson.deregister(name, manifest as AppManifest);
    });
    ops.set("POST /mcp/flag", async ({ body }) => {
      const { key, enabled } = parse(McpFlagSchema, body);
      return this.mcpJson.flag(key, enabled);
    });
    ops.set("POST /backends/start", async ({ body }) => {
      const { name, manifest, digest } = parse(StartSchema, body);
      if (digest !== undefined) this.digests.set(name, digest);
      return this.startBackend(name, manifest as AppManifest, digest);
    });
    // The owner's settings (GET/PATCH /api/config/personalclaw): read from config.json as it is
    // now, written for the next start; the running supervisor keeps this start's.
    ops.set("POST /config/read", async () => {
      const read = readOwnerConfig(this.opts.paths.home);
      if (!read.ok) throw new GatewayError("config_file_invalid", { vars: { reason: read.reason } });
      return settingsDocument(read.config);
    });
    ops.set("POST /config/write", async ({ body }) =>
      writeOwnerSetting(this.opts.paths.home, parse(SettingWriteSchema, body)),
    );
    // Secrets: values come in and are sealed here; nothing answers one back.
    ops.set("POST /secrets/list", async () => this.secrets.list());
    ops.set("POST /secrets/put", async ({ body }) => {
      const { name, value, consumers } = parse(SecretStoreRequestSchema, body);
      return this.secrets.put(name, value, consumers);
    });
    ops.set("POST /secrets/delete", async ({ body }) =>
      this.secrets.delete(parse(SecretDeleteRequestSchema, body).name),
    );
    ops.set("POST /secrets/assign", async ({ body }) => {
      const { name, as, consumer } = parse(SecretAssignRequestSchema, body);
      this.secrets.assign(name, as, consumer);
      return { assigned: true };
    });
    ops.set("POST /secrets/unassign", async ({ body }) => {
      const { app, as } = parse(SecretUnassignRequestSchema, body);
      return { unassigned: this.secrets.unassign(app, as) };
    });
    ops.set("POST /secrets/rebind", async ({ body }) => {
      const { app, fromDigest, toDigest, declared } = parse(SecretRebindRequestSchema, body);
      this.digests.set(app, toDigest);
      return this.secrets.rebind(app, fromDigest, toDigest, declared);
    });
    ops.set("POST /backends/restart", async ({ body }) => {
      const { name, manifest, digest } = parse(StartSchema, body);
      if (digest !== undefined) this.digests.set(name, digest);
      if (!this.supervisor.status(name)) return this.startBackend(name, manifest as AppManifest, digest);
      // A restart opens the secrets again, so one assigned since the last start arrives now.
      const restarted = await this.supervisor.restart(
        name,
        await this.secretsFor(name, manifest as AppManifest, digest ?? this.digests.get(name)),
      );
      if (!restarted.ok) throw new GatewayError("app_restart_failed", { vars: { name, reason: restarted.reason } });
      await this.report(name, this.supervisor.status(name)!);
      return { started: true };
    });
    ops.set("POST /backends/stop", async ({ body }) => {
      const { name } = parse(NameSchema, body);
      await this.stopBackend(name);
      return { stopped: true };
    });
    return ops;
  }

  async stopAll(): Promise<void> {
    await this.supervisor.stopAll();
    await this.egress.stopAll();
  }
}
