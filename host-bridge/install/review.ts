// The install review: what installing an app grants and runs, in the order the consent dialog
// shows it (INST-12, MAN-07..09). It is built only from the validated manifest and the scan of
// the staged bytes, and the consent digest covers it, so the owner's yes is to these words.
import { configGrantPaths, JOB_TIMEOUT_DEFAULT_S, type AppManifest } from "../../kernel/contracts/manifest";
import { mcpDefinition } from "../../kernel/contracts/mcp";
import { serverSecrets } from "../../kernel/contracts/mcp-server-secrets";
import type { ParkedDataView } from "../../kernel/contracts/parked-data";
import type { ScanResult } from "../scan/scan-staged";
import type { InstallReview } from "../../kernel/contracts/install-review";
import { closurePinsText, npmClosureReview, type NpmClosure } from "../../kernel/contracts/npm-closure";
import { mcpRegistryEntryReview, type McpRegistryOrigin } from "../../kernel/contracts/mcp-registry";
import { createHash } from "node:crypto";
import { DEFAULT_HOOK_TIMEOUT_SECONDS } from "../settings";
import { folderNeedWords } from "../../kernel/contracts/folder-grants";
import { secretDelivery, secretHoldingWords, secretPlaceWords } from "../../kernel/contracts/secret-delivery";

/** DESIGN.md: onInstall and onUninstall run bounded to 60 s; onUpdate is parsed, never run. */
export const HOOK_TIMEOUT_SECONDS = DEFAULT_HOOK_TIMEOUT_SECONDS;

const KNOWN_KEYS = new Set([
  "name",
  "version",
  "displayName",
  "description",
  "icon",
  "backend",
  "ui",
  "permissions",
  "crons",
  "mcpServers",
  "dependencies",
  "setup",
  "launches",
  "writes",
  "requires",
  "secrets",
  "minPersonalClawVersion",
  "requiresCoreFeatures",
  "quality",
  "native",
]);

const NETWORK_NOTE =
  "Enforced: the app's processes reach these hosts and no others, through its own egress broker; with none listed they have no network at all.";
// install-dependencies.ts always runs npm with --ignore-scripts: no package code runs at install.
const NPM_NOTE =
  "npm installs these packages in the sandbox with install scripts off (--ignore-scripts): none of their code runs at install; the app's code loads them when it runs.";

function cmd(c: { command: string; args?: string[] | undefined }): { command: string; args: string[] } {
  return { command: c.command, args: [...(c.args ?? [])] };
}

/** Builds the review from a validated manifest and the scan of the staged bytes; it states the hook cap that applies. */
export function buildReview(
  manifest: AppManifest,
  scan: ScanResult,
  hookTimeoutSeconds: number = HOOK_TIMEOUT_SECONDS,
  parked: ParkedDataView | null = null,
  closure: NpmClosure | null = null,
  registryEntry: McpRegistryOrigin | null = null,
): InstallReview {
  const p = manifest.permissions ?? {};
  // A routed job needs permissions.cron (issue 20); the agent-prompt form also an agent tier (CRON-02).
  const registers = (c: { route?: string | undefined }) =>
    p.cron === true && (c.route !== undefined || p.agent !== undefined);
  const hook = (h: { command: string; args?: string[] | undefined } | undefined) =>
    h ? { ...cmd(h), timeoutSeconds: hookTimeoutSeconds } : null;
  const npm = manifest.dependencies?.npmPackages ?? [];

  return {
    app: {
      name: manifest.name,
      version: manifest.version,
      displayName: manifest.displayName ?? null,
      description: manifest.description ?? null,
    },
    prerequisites: (manifest.requires ?? []).map((r) => ({ name: r.name, why: r.why, how: r.how })),
    permissions: {
      api: [...(p.api ?? [])],
      config: configGrantPaths(p.config).read,
      configWrite: configGrantPaths(p.config).write,
      events: [...(p.events ?? [])],
      eventSubscriptions: [...(p.eventSubscriptions ?? [])],
      mcpTools: [...(p.mcpTools ?? [])],
      appMessaging: [...(p.appMessaging ?? [])],
      memory: p.memory === true,
      cron: p.cron === true,
      storage: p.storage === true,
      approvals: p.approvals === true,
      agent: p.agent ?? null,
      network: { hosts: Array.isArray(p.network) ? [...p.network] : [], enforced: true, note: NETWORK_NOTE },
      ...(p.folders?.length ? { folders: p.folders.map(folderNeedWords) } : {}),
    },
    scheduledJobs: (manifest.crons ?? []).map((c) => ({
      name: c.name,
      schedule: c.schedule,
      timezone: c.timezone ?? "UTC",
      route: c.route ?? null,
      timeoutSeconds: c.timeoutSeconds ?? JOB_TIMEOUT_DEFAULT_S,
      enabled: c.enabled !== false,
      registers: registers(c),
    })),
    pythonPackages: [...(manifest.dependencies?.pythonDependencies ?? [])],
    npmPackages: { packages: [...npm], note: npm.length > 0 ? NPM_NOTE : null },
    npmClosure: closure
      ? npmClosureReview(closure, createHash("sha256").update(closurePinsText(closure)).digest("hex"))
      : null,
    ...(registryEntry ? { mcpRegistryEntry: mcpRegistryEntryReview(registryEntry) } : {}),
    ui: manifest.ui
      ? {
          entry: manifest.ui.entry ?? null,
          pages: (manifest.ui.pages ?? []).map((pg) => ({ entryPoint: pg.entryPoint, title: pg.title ?? null })),
        }
      : null,
    backend: manifest.backend
      ? {
          ...cmd(manifest.backend),
          entryPoint: manifest.backend.entryPoint ?? null,
          healthCheck: manifest.backend.healthCheck ?? "/health",
        }
      : null,
    installHook: hook(manifest.setup?.onInstall),
    uninstallHook: hook(manifest.setup?.onUninstall),
    updateHook: { declared: manifest.setup?.onUpdate !== undefined, runs: false },
    mcpServers: Object.entries(manifest.mcpServers ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, server]) => {
        const held = serverSecrets(server);
        return {
          name,
          ...mcpDefinition(manifest, name)!,
          env: { ...(server.env ?? {}) },
          ...(held.length > 0 ? { secrets: held } : {}),
        };
      }),
    launches: (manifest.launches ?? []).map((l) => ({
      program: l.program,
      why: l.why,
      inherits: [...(l.inherits ?? [])],
      inheritsWhile: l.inheritsWhile ? { setting: l.inheritsWhile.setting, value: l.inheritsWhile.value } : null,
      hosts: [...(l.hosts ?? [])],
      npmPackage: l.npmPackage ?? null,
    })),
    writes: (manifest.writes ?? []).map((w) => ({ path: w.path, why: w.why })),
    secrets: (manifest.secrets ?? []).map((s) => ({
      name: s.name,
      why: s.why,
      appHoldsValue: secretDelivery(s) === "env",
      sendsTo: s.use ? s.use.origins.map((origin) => ({ origin, place: secretPlaceWords(s.use!) })) : [],
      note: secretHoldingWords(s),
    })),
    findings: {
      runtime: scan.findings.filter((f) => f.runs),
      tests: scan.findings.filter((f) => !f.runs),
    },
    verdict: scan.verdict,
    keptData: parked
      ? {
          version: parked.version,
          parkedAt: parked.parkedAt,
          consentDigest: parked.consentDigest,
          note: `${keptDataText(parked)}. It is adopted only with {"adopt_data": true}; otherwise this install starts with an empty data/ and the kept data stays parked.`,
        }
      : null,
    unrecognisedManifestKeys: Object.keys(manifest)
      .filter((k) => !KNOWN_KEYS.has(k))
      .sort(),
  };
}

/** "kept data from <version> of <date>", the words every renderer of the review shows. */
export function keptDataText(parked: Pick<ParkedDataView, "version" | "parkedAt">): string {
  return `kept data from ${parked.version ?? "an unrecorded version"} of ${parked.parkedAt ?? "an unrecorded date"}`;
}
