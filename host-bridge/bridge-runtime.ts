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
import { installApp, removeAppFiles, undoInstall, type InstallProgressEvent } from "./install/install-app";
import { listParkedData, parkedDataDir, purgeParkedData } from "./install/parked-data";
import { listUiFiles } from "./install/ui-files";
import { ParkedDataViewSchema } from "../workers/contracts/parked-data";
import { uiFolderOf } from "../workers/contracts/manifest";
import { venvPython } from "./install/install-dependencies";
import { runHook } from "./install/run-hook";
import { sandboxAvailability, type SandboxAvailability } from "./sandbox/bubblewrap";
import { boundsAvailability, removeStaleGroups, type BoundsAvailability } from "./sandbox/bounds";
import { BackendSupervisor, type BackendStatus } from "./supervisor/index";
import { readAnchor } from "./sel-anchor";
import type { HomePaths } from "./home";
import { childLimits, type OwnerConfig } from "./owner-config";

export interface BridgeRuntimeOptions {
  paths: HomePaths;
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
const InstallSchema = SourceSchema.extend({
  consent: z.string().max(200).optional(),
  takenNames: z.array(z.string()).max(10_000),
  installId: z.string().max(100).optional(),
  adoptData: z.boolean().optional(),
});
const NameSchema = z.object({ name: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/) });
const StartSchema = NameSchema.extend({ manifest: z.record(z.string(), z.unknown()) });
const RemoveSchema = NameSchema.extend({
  purgeData: z.boolean(),
  manifest: z.record(z.string(), z.unknown()).optional(),
  version: z.string().max(64),
  consentDigest: z.string().max(200),
});
const UndoSchema = NameSchema.extend({ adoptedData: ParkedDataViewSchema.nullable() });
const NativeProofSchema = z.object({ source: z.string().min(1).max(4096), digest: z.string().max(200) });

/** What the bridge staged from the package's own apps/native/ at this start: the only apps the gateway may record as native. */
interface NativeProof {
  manifest: AppManifest;
  digest: string;
  uiFiles: Record<string, string>;
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new GatewayError("bad_request", { vars: { reason: `${parsed.error.issues[0].path.join(".")} ${parsed.error.issues[0].message}` } });
  return parsed.data;
}

function refusalError(refusal: { code: string; message: string; path?: string; field?: string; detail?: unknown }): GatewayError {
  return GatewayError.fromEnvelope(refusal.code, refusal.message, { path: refusal.path, field: refusal.field, ...(refusal.detail as object | undefined) }, 422);
}

/** What an app backend is told to run: `python`/`python3` means the app's own venv when it has one. */
export function backendCommand(appDir: string, manifest: AppManifest): { command: string; args: string[]; healthCheck?: string } {
  const backend = manifest.backend!;
  const usesVenv = (backend.command === "python" || backend.command === "python3") && existsSync(venvPython(appDir));
  return { command: usesVenv ? venvPython(appDir) : backend.command, args: [...(backend.args ?? [])], healthCheck: backend.healthCheck };
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
  private readonly reports = new Map<string, { next: BackendReport | null; drained: Promise<void> }>();
  private progress = new Map<string, InstallProgressEvent[]>();
  private pendingRows: Array<{ kind: string; outcome: "allowed" | "refused" | "info"; subject: string }> = [];
  private readonly previewOptions: PreviewOptions;
  private readonly nativeProofs = new Map<string, NativeProof>();

  constructor(private readonly opts: BridgeRuntimeOptions) {
    this.previewOptions = {
      quarantineRoot: opts.paths.quarantine,
      reservedNames: reservedAppNames(opts.packageRoot),
      core: { version: opts.version, features: CORE_FEATURES },
      hookTimeoutSeconds: opts.hookTimeoutSeconds,
      appsDir: opts.paths.apps,
    };
    const preferred = opts.config.sandbox.bounds;
    this.bounds = boundsAvailability(opts.parentEnv.PATH, preferred === "auto" ? undefined : preferred);
    this.supervisor = new BackendSupervisor({
      home: opts.paths.home,
      ownerHome: homedir(),
      sandbox: { mode: opts.config.sandbox.mode },
      gatewayPort: opts.gatewayPort,
      bounds: this.bounds,
      limits: childLimits(opts.config),
      onLimit: (name, hit, limits) => void this.audit({ kind: "app_limit_reached", outcome: "refused", subject: name, detail: { limit: hit, processes: limits.processes, memory_bytes: limits.memoryBytes } }),
      parentEnv: opts.parentEnv,
      passthrough: opts.config.sandbox.env_passthrough,
      onChange: (name, status) => void this.report(name, status),
      log: (level, line) => opts.log(`${level} ${line}`),
    });
  }

  /** Probes bubblewrap once and ends backends a previous bridge left orphaned. */
  async prepare(): Promise<void> {
    this.sandbox = await sandboxAvailability(this.opts.parentEnv.PATH);
    this.opts.log(`bridge: app children are bounded by ${this.bounds.mechanism}: ${this.bounds.description}`);
    const staleGroups = removeStaleGroups(this.bounds);
    if (staleGroups.length > 0) this.opts.log(`bridge: removed ${staleGroups.length} cgroup(s) a previous bridge left behind`);
    const reaped = await this.supervisor.reapOrphans();
    this.opts.log(`bridge: orphan sweep ${JSON.stringify(reaped)}`);
    // The gateway is not up yet: these rows are written once it is (startEnabledBackends).
    for (const name of reaped.killed) this.pendingRows.push({ kind: "backend_orphan_killed", outcome: "allowed", subject: name });
  }

  /**
   * Writes a refusal of the bridge's own API to the security log (never the presented
   * secret). The log counts identical refusals (same code and group) in one row, the rule
   * the gateway's own refusals follow, so a process hammering the port cannot flood it.
   */
  auditRefusal(code: BridgeRefusal, subject: string, group: string): void {
    void this.audit({ kind: `bridge_${code}`, outcome: "refused", subject, group });
  }

  /** Appends a security-log row as the bridge's own work. */
  private async audit(row: { kind: string; outcome: "allowed" | "refused" | "info"; subject: string; detail?: Record<string, unknown>; group?: string }): Promise<void> {
    await this.opts.callGateway("POST", "/api/internal/sel/append", { principal: "internal:bridge", detail: {}, ...row }).catch((error) => {
      this.opts.log(`bridge: could not write a security-log row: ${error instanceof Error ? error.message : String(error)}`);
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
          this.opts.log(`bridge: could not report ${name}'s backend: ${error instanceof Error ? error.message : String(error)}`);
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
      parentEnv: this.opts.parentEnv,
      passthrough: this.opts.config.sandbox.env_passthrough,
      log: this.opts.log,
      appsDir: this.opts.paths.apps,
      preview: this.previewOptions,
    };
  }

  async startBackend(name: string, manifest: AppManifest): Promise<{ started: boolean; reason?: string; code?: string }> {
    if (!manifest.backend) return { started: false, reason: "the app has no backend" };
    if (this.opts.skipBackends) return { started: false, reason: "PERSONALCLAW_SKIP_APP_BACKENDS=1" };
    const appDir = join(this.opts.paths.apps, name);
    const result = await this.supervisor.start({
      name,
      appDir,
      dataDir: join(appDir, "data"),
      hasStorage: manifest.permissions?.storage === true,
      backend: backendCommand(appDir, manifest),
    });
    if (!result.ok) {
      this.opts.log(`bridge: ${name}'s backend did not start: ${result.code} ${result.reason}`);
      await this.audit({ kind: "backend_start_refused", outcome: "refused", subject: name, detail: { code: result.code } });
      await this.sendReport(name, {
        status: { running: false, healthy: false, pid: null, port: null, startedAt: null, restarts: 0, lastLines: [], exit: null, reason: `${result.code}: ${result.reason}` },
        secret: null,
      });
      return { started: false, reason: result.reason, code: result.code };
    }
    await this.report(name, this.supervisor.status(name)!);
    return { started: true };
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
    const answer = await this.opts.callGateway("GET", "/api/internal/apps/startable");
    const apps = (answer.body?.apps ?? []) as Array<{ name: string; manifest: AppManifest }>;
    await Promise.all(apps.map((app) => this.startBackend(app.name, app.manifest)));
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
      const listed = uiFolder === null ? { ok: true as const, files: {} } : await listUiFiles(staged.stagedDir!, uiFolder);
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
      const { source } = parse(SourceSchema, body);
      const result = await previewBundle(source, this.previewOptions);
      if (!result.ok) throw refusalError(result);
      return { review: result.review, digest: result.digest };
    });
    ops.set("POST /apps/install", async ({ body }) => {
      const request = parse(InstallSchema, body);
      const events: InstallProgressEvent[] = [];
      if (request.installId) this.progress.set(request.installId, events);
      const installed = await installApp(request.source, request.consent, new Set(request.takenNames), this.hookContext(), (event) => events.push(event), {
        adoptData: request.adoptData === true,
      });
      return { manifest: installed.manifest, review: installed.review, digest: installed.digest, uiFiles: installed.uiFiles, adoptedData: installed.adoptedData };
    });
    // The gateway could not record an install that moved into place: undo it, freeing the name.
    ops.set("POST /apps/install-undo", async ({ body }) => {
      const { name, adoptedData } = parse(UndoSchema, body);
      await this.stopBackend(name);
      await undoInstall(this.opts.paths.apps, name, adoptedData);
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
      if (!proof || proof.digest !== digest) throw new GatewayError("native_app_unproven", { vars: { source: source.slice(0, 300) } });
      return proof;
    });
    ops.set("POST /apps/install-progress", async ({ body }) => {
      const { id } = parse(z.object({ id: z.string().max(100) }), body);
      return { steps: this.progress.get(id) ?? null };
    });
    ops.set("POST /apps/remove", async ({ body }) => {
      const { name, purgeData, manifest, version, consentDigest } = parse(RemoveSchema, body);
      // Checked before anything is torn down: parking over an earlier install's data would destroy it.
      if (!purgeData && existsSync(join(this.opts.paths.apps, name, "data")) && existsSync(parkedDataDir(this.opts.paths.apps, name))) {
        throw new GatewayError("parked_data_exists", { vars: { name } });
      }
      // Teardown order (UNIN-02): the uninstall hook, then the backend, then the files.
      const hook = (manifest as AppManifest | undefined)?.setup?.onUninstall;
      const appDir = join(this.opts.paths.apps, name);
      let hookResult: string | null = null;
      if (hook && existsSync(appDir)) {
        const ctx = this.hookContext();
        const result = await runHook(hook, { name, appDir, dataDir: join(appDir, "data"), hasStorage: (manifest as AppManifest).permissions?.storage === true }, ctx, this.opts.hookTimeoutSeconds, {
          KEEP_DATA: purgeData ? "0" : "1",
          PURGE_DATA: purgeData ? "1" : "0",
        });
        hookResult = result.ok ? "ok" : result.reason;
        if (!result.ok) this.opts.log(`bridge: ${name}'s uninstall hook failed (${result.reason}); removing it anyway`);
      }
      await this.stopBackend(name);
      await removeAppFiles(this.opts.paths.apps, name, purgeData, { version, consentDigest });
      return { removed: true, uninstallHook: hookResult };
    });
    ops.set("POST /backends/start", async ({ body }) => {
      const { name, manifest } = parse(StartSchema, body);
      return this.startBackend(name, manifest as AppManifest);
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
  }
}
