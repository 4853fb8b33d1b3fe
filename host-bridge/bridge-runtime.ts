// The host bridge's work for a running gateway: its start (recovery, probes, native apps,
// backends) and stop, and the app backends it supervises. The gateway holds every record; the
// bridge holds bytes and processes. Its internal operations are one handler per row of the
// bridge contract, grouped by area under operations/; what it reports back is bridge-reporting.ts.
import { homedir } from "node:os";
import { existsSync, readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { CORE_FEATURES } from "../kernel/contracts/core";
import { uiFolderOf, type AppManifest } from "../kernel/contracts/manifest";
import { reservedAppNames } from "./reserved-app-names";
import type { BridgeOperation, BridgeRefusal } from "./server";
import { previewBundle, type PreviewOptions } from "./install/preview";
import { recoverTransitions, type PendingRecovery } from "./install/recover-transitions";
import { journalQuestion, TransitionSettlement } from "./install/transition-settlement";
import { listUiFiles } from "./install/ui-files";
import { recoverNativeResyncs, resyncNativeApp } from "./install/native-resync";
import { appInterpreter } from "./sandbox/app-interpreter";
import { sandboxAvailability, type SandboxAvailability } from "./sandbox/bubblewrap";
import { boundsAvailability, removeStaleGroups, type BoundsAvailability } from "./sandbox/bounds";
import { EgressBrokers } from "./egress/brokers";
import { originTrustOf } from "./egress/origin-tls";
import type { BrokeredSecret } from "./egress/secret-placeholders";
import { brokeredSecrets } from "./secrets/brokered-secrets";
import { appNetworkGrant, grantPatterns, type HostPattern } from "../kernel/rules/network-grant";
import type {
  GatewayCallbackAnswer,
  GatewayCallbackName,
  GatewayCallbackRequest,
} from "../kernel/contracts/bridge-operations";
import {
  BackendSupervisor,
  type BackendSpec,
  type StartResult,
  type SupervisedBackendStatus,
} from "./supervisor/backend-supervisor";
import type { HomePaths } from "./home";
import { childLimits, type OwnerConfig } from "./owner-config";
import { SecretStore, secretStorePaths } from "./secrets/secret-store";
import { HeldSecrets, startHeldSecretNames } from "./secrets/held-secrets";
import { McpJson } from "./mcp/mcp-json";
import { bridgeOperationRegistry, callGatewayRoute, GatewayCallbackFailed, type CallGateway } from "./bridge-contract";
import { BridgeReporting } from "./bridge-reporting";
import { TransitionProgress } from "./transition-progress";
import { appOperations } from "./operations/app-operations";
import { backendOperations } from "./operations/backend-operations";
import { ownerOperations } from "./operations/owner-operations";
import { folderOperations } from "./operations/folder-operations";
import { durabilityOperations } from "./operations/durability-operations";
import { sourceOperations } from "./operations/source-operations";
import type { FolderGrant } from "../kernel/contracts/folder-grants";
import { installPendingPackages, packagesHoldBack } from "./durability/restore-packages";

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
  callGateway: CallGateway;
}

/** What the bridge staged from the package's own apps/native/ at this start: the only apps the gateway may record as native. */
export interface NativeProof {
  manifest: AppManifest;
  digest: string;
  uiFiles: Record<string, string>;
}

/** What an app backend is told to run: `python`/`python3` means the app's own venv when it has one. */
export function backendCommand(
  appDir: string,
  manifest: AppManifest,
): { command: string; args: string[]; healthCheck?: string; startTimeoutSeconds?: number } {
  const backend = manifest.backend!;
  return {
    command: appInterpreter(appDir, backend.command),
    args: [...(backend.args ?? [])],
    healthCheck: backend.healthCheck,
    startTimeoutSeconds: backend.startTimeoutSeconds,
  };
}

/** The status reported for a backend that could not start: nothing runs. */
function notStarted(reason: string) {
  return {
    running: false,
    healthy: false,
    pid: null,
    port: null,
    slot: null,
    startedAt: null,
    restarts: 0,
    lastLines: [],
    exit: null,
    reason,
  };
}

export class BridgeRuntime {
  readonly supervisor: BackendSupervisor;
  private sandbox: SandboxAvailability = { ok: false, reason: "not probed yet" };
  private readonly bounds: BoundsAvailability;
  private readonly egress: EgressBrokers;
  readonly reporting: BridgeReporting;
  readonly progress: TransitionProgress;
  readonly previewOptions: PreviewOptions;
  readonly nativeProofs = new Map<string, NativeProof>();
  /** Each app's consent digest as the gateway last named it: the binding its secrets open under. */
  readonly digests = new Map<string, string>();
  private recovery: PendingRecovery | null = null;
  /** Transitions whose request went away, and whatever journals a workerd restart left. */
  readonly settlement: TransitionSettlement;
  readonly secrets: SecretStore;
  /** What each backend was started with of its secrets, for "restart pending". */
  readonly heldSecrets = new HeldSecrets();
  readonly mcpJson: McpJson;

  constructor(readonly opts: BridgeRuntimeOptions) {
    this.reporting = new BridgeReporting(opts.callGateway, opts.log);
    this.progress = new TransitionProgress(opts.paths.home, this.reporting, opts.log);
    this.secrets = new SecretStore(secretStorePaths(opts.paths.home));
    this.settlement = new TransitionSettlement({
      home: opts.paths.home,
      appsDir: opts.paths.apps,
      quarantine: opts.paths.quarantine,
      log: opts.log,
      callGateway: opts.callGateway,
      stopBackend: (name) => this.stopBackend(name),
    });
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
    this.egress = new EgressBrokers(
      opts.runtimeDir,
      (decision) => void this.reporting.auditEgress(decision),
      originTrustOf(opts.config.egress.extra_ca_certs, opts.parentEnv.SSL_CERT_FILE, opts.log),
    );
    this.supervisor = new BackendSupervisor({
      home: opts.paths.home,
      runtimeDir: opts.runtimeDir,
      egress: this.egress,
      ownerHome: homedir(),
      sandbox: { mode: opts.config.sandbox.mode },
      gatewayPort: opts.gatewayPort,
      bounds: this.bounds,
      limits: childLimits(opts.config),
      // A restart the watchdog could not make is evidence, as a refused first start is.
      onRestartRefused: (name, code) =>
        void this.reporting.audit({
          kind: "backend_start_refused",
          outcome: "refused",
          subject: name,
          detail: { code },
        }),
      onLimit: (name, hit, limits, usedBytes) =>
        void this.reporting.audit({
          kind: "app_limit_reached",
          outcome: "refused",
          subject: name,
          detail: {
            limit: hit,
            processes: limits.processes,
            memory_bytes: limits.memoryBytes,
            storage_bytes: limits.storageBytes,
            ...(usedBytes !== undefined ? { used_bytes: usedBytes } : {}),
          },
        }),
      parentEnv: opts.parentEnv,
      passthrough: opts.config.sandbox.env_passthrough,
      onChange: (name, status) => this.report(name, status),
      log: (level, line) => opts.log(`${level} ${line}`),
    });
  }

  /** Probes bubblewrap once and ends backends a previous bridge left orphaned. */
  async prepare(): Promise<void> {
    // First: journals a killed gateway left are finished or undone, the quarantine emptied
    // (a native re-sync's first: it may have left data/ in the quarantine).
    await recoverNativeResyncs({ home: this.opts.paths.home, appsDir: this.opts.paths.apps, log: this.opts.log });
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
      this.reporting.auditOnceUp({ kind: "backend_orphan_killed", outcome: "allowed", subject: name });
  }

  /** Writes a refusal of the bridge's own API to the security log (never the presented secret). */
  auditRefusal(code: BridgeRefusal, subject: string, group: string): void {
    this.reporting.auditRefusal(code, subject, group);
  }

  report(name: string, status: SupervisedBackendStatus): Promise<void> {
    const { held: _held, name: _name, ...view } = status;
    return this.reporting.reportBackend(name, { status: view, secret: this.supervisor.secretOf(name) });
  }

  /**
   * A call back whose refusal the start survives: an answer that is not 200 or does not match
   * its row is logged and answers null. A gateway that cannot be reached at all still throws.
   */
  private async tellGateway<N extends GatewayCallbackName>(
    callback: N,
    body: GatewayCallbackRequest<N>,
  ): Promise<GatewayCallbackAnswer<N> | null> {
    try {
      return await callGatewayRoute(this.opts.callGateway, callback, body);
    } catch (error) {
      if (!(error instanceof GatewayCallbackFailed)) throw error;
      this.opts.log(`bridge: ${error.message}`);
      return null;
    }
  }

  hookContext() {
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
      grantedFolders: (name: string) => this.foldersFor(name),
    };
  }

  /**
   * The secrets the owner assigned to this install, opened for its start. A copy that does not
   * open for exactly this app and consent digest is left out, and is a security-log row.
   */
  async secretsFor(name: string, manifest: AppManifest, digest: string | undefined): Promise<Record<string, string>> {
    const declared = startHeldSecretNames(manifest);
    this.heldSecrets.started(name, {});
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
    await this.bindingsRefused(name, opened.refused);
    this.heldSecrets.started(name, opened.env);
    return opened.env;
  }

  /** A sealed copy that did not open for this app and install: a line and a security-log row each. */
  private async bindingsRefused(name: string, refused: readonly string[]): Promise<void> {
    for (const as of refused) {
      this.opts.log(
        `bridge: ${name}'s secret ${as} was not given to it: its sealed copy is not bound to this app and install`,
      );
      await this.reporting.audit({
        kind: "secret_binding_refused",
        outcome: "refused",
        subject: name,
        principal: "internal:bridge",
        detail: { name: as },
      });
    }
  }

  /** The secrets its broker writes for it, each read again at every request; a copy bound elsewhere is a row. */
  async brokeredSecretsFor(name: string, manifest: AppManifest, digest: string | undefined): Promise<BrokeredSecret[]> {
    if (digest === undefined) return [];
    try {
      const opened = brokeredSecrets(this.secrets, { app: name, digest }, manifest);
      await this.bindingsRefused(name, opened.refused);
      return opened.secrets;
    } catch (error) {
      this.opts.log(`bridge: ${name}'s placeholder secrets could not be opened: ${String(error)}`);
      return [];
    }
  }

  /**
   * The folders the owner granted the app, as its record holds them now (asked at every start,
   * so a revoked grant is gone at the next one). A gateway that cannot answer means no folders:
   * the backend starts seeing less, never more.
   */
  async foldersFor(name: string): Promise<FolderGrant[]> {
    try {
      return (await callGatewayRoute(this.opts.callGateway, "appFolderGrants", undefined, name)).folders;
    } catch (error) {
      this.opts.log(`bridge: ${name}'s folder grants could not be read, it starts without them: ${String(error)}`);
      return [];
    }
  }

  async startBackend(
    name: string,
    manifest: AppManifest,
    digest?: string,
  ): Promise<{ started: boolean; reason?: string; code?: string }> {
    if (!manifest.backend) return { started: false, reason: "the app has no backend" };
    if (this.opts.skipBackends) return { started: false, reason: "PERSONALCLAW_SKIP_APP_BACKENDS=1" };
    // Enabling an app whose backend already runs changes nothing: its current status is reported again.
    const current = this.supervisor.status(name);
    if (current?.running) {
      await this.report(name, current);
      return { started: true, reason: "already running" };
    }
    const result = await this.launchBackend(name, manifest, digest, (spec) => this.supervisor.start(spec));
    if (!result.ok) {
      await this.reporting.reportBackend(name, {
        status: notStarted(`${result.code}: ${result.reason}`),
        secret: null,
      });
      return { started: false, reason: result.reason, code: result.code };
    }
    await this.report(name, this.supervisor.status(name)!);
    return { started: true };
  }

  /**
   * Starts an update's new version beside the running backend (supervisor/successor.ts): the
   * gateway is told nothing until it takes over, so a refusal is logged and audited only.
   */
  async startSuccessor(name: string, manifest: AppManifest): Promise<{ started: boolean; reason?: string }> {
    if (!manifest.backend) return { started: false, reason: "the app has no backend" };
    if (this.opts.skipBackends) return { started: false, reason: "PERSONALCLAW_SKIP_APP_BACKENDS=1" };
    const result = await this.launchBackend(name, manifest, this.digests.get(name), (spec) =>
      this.supervisor.startSuccessor(spec),
    );
    return result.ok ? { started: true } : { started: false, reason: result.reason };
  }

  /** The spec of an app's backend as its manifest and the owner's grants make it, started by `start`; a refusal is a row. */
  private async launchBackend(
    name: string,
    manifest: AppManifest,
    digest: string | undefined,
    start: (spec: BackendSpec) => Promise<StartResult>,
  ): Promise<StartResult | { ok: false; code: string; reason: string }> {
    const appDir = join(this.opts.paths.apps, name);
    const network = this.networkOf(name, manifest);
    // The owner's explicit widening is evidence every time it takes effect.
    if (network === "all")
      await this.reporting.audit({
        kind: "app_network_all",
        outcome: "info",
        subject: name,
        detail: { setting: "sandbox.network_all" },
      });
    const heldBack = packagesHoldBack(this.opts.paths.home, name);
    const result = heldBack
      ? { ok: false as const, code: heldBack.code, reason: heldBack.message }
      : await start({
          name,
          appDir,
          dataDir: join(appDir, "data"),
          hasStorage: manifest.permissions?.storage === true,
          backend: backendCommand(appDir, manifest),
          network,
          secrets: await this.secretsFor(name, manifest, digest),
          brokered: await this.brokeredSecretsFor(name, manifest, digest),
          folders: await this.foldersFor(name),
        });
    if (!result.ok) {
      this.opts.log(`bridge: ${name}'s backend did not start: ${result.code} ${result.reason}`);
      await this.reporting.audit({
        kind: "backend_start_refused",
        outcome: "refused",
        subject: name,
        detail: { code: result.code },
      });
    }
    return result;
  }

  /** The hosts an app's backend may reach: its consented grant, or any public host when the owner set it so in config.json. */
  private networkOf(name: string, manifest: AppManifest): readonly HostPattern[] | "all" {
    if (this.opts.config.sandbox.network_all.includes(name)) return "all";
    return grantPatterns(appNetworkGrant(manifest));
  }

  /**
   * Tells a restarted workerd what every backend is doing: its registry starts with no
   * backend running, and a steady state is never re-reported on its own.
   */
  async reportAllBackends(): Promise<void> {
    await Promise.all(this.supervisor.names().map((name) => this.report(name, this.supervisor.status(name)!)));
    await this.tellGateway("backendsReported", {});
  }

  async stopBackend(name: string): Promise<void> {
    this.supervisor.hold(name);
    await this.supervisor.stop(name);
    this.supervisor.release(name);
  }

  /** Starts the backend of every enabled app the gateway's registry holds. */
  async startEnabledBackends(): Promise<void> {
    await this.reporting.writeWaitingRows();
    // The journals whose outcome the record decides are settled before any backend starts.
    await this.recovery?.settle(
      async (journal) =>
        (await callGatewayRoute(this.opts.callGateway, "askJournal", journalQuestion(journal), journal.name)).outcome,
    );
    this.recovery = null;
    const apps = (await this.tellGateway("startableApps", undefined))?.apps ?? [];
    const start = (app: (typeof apps)[number]) => this.startBackend(app.name, app.manifest as AppManifest, app.digest);
    await Promise.all(apps.map(start));
    await this.tellGateway("backendsReported", {});
    // Not awaited: the ready line does not wait for packages; a restored app starts once its own are in.
    void installPendingPackages(this.opts.paths, this.hookContext(), this.reporting, apps, start);
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
      await resyncNativeApp(
        { home: this.opts.paths.home, appsDir: this.opts.paths.apps, log: this.opts.log },
        staged.manifest.name,
        staged.stagedDir!,
      );
      this.nativeProofs.set(source, { manifest: staged.manifest, digest: staged.digest, uiFiles: listed.files });
      records.push({ digest: staged.digest, source });
    }
    await this.tellGateway("recordNativeApps", { apps: records });
  }

  /** The bridge's internal operations: one handler per bridge contract row, each request parsed with its row. */
  operations(): Map<string, BridgeOperation> {
    return bridgeOperationRegistry({
      ...appOperations(this),
      ...backendOperations(this),
      ...ownerOperations(this),
      ...folderOperations(this),
      ...durabilityOperations(this),
      ...sourceOperations(this),
    });
  }

  async stopAll(): Promise<void> {
    await this.supervisor.stopAll();
    await this.egress.stopAll();
  }
}
