// The gateway's half of an install, as named steps in one order; the bridge's half
// (host-bridge/install/install-app.ts) stages, checks consent, installs packages, runs the
// hook and moves the folder into place. Then the gateway records the app, undoing the move
// when it cannot; the bridge drops its journal; and the app is audited, announced, started,
// and its MCP servers and jobs registered. An install takes no transition lock: its name is
// known only once the bridge has staged it, and the journal and the final rename keep two
// installs of one name apart.
import { appRegistry } from "../../durable/instances";
import { emitEvent } from "../../durable/event-hub/emit";
import type { Env } from "../../durable/env";
import type { AppRecord } from "../../kernel/contracts/app-record";
import type { BridgeAnswer } from "../../kernel/contracts/bridge-operations";
import { GatewayError } from "../../kernel/contracts/errors";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { bridgeCall } from "../bridge-client";
import { registerMcpServers } from "../mcp-registration";
import type { RouteRequest } from "../route-row";
import { auditedRefusal } from "./audited-refusal";
import { startBackend } from "./enable-disable";
import { uiRevisionOf } from "./update-commit";

/** What the owner asked to install: a folder, the digest consented to, and whether parked data is taken over. */
export interface InstallRequest {
  source: string;
  consent: string | undefined;
  installId: string | undefined;
  /** Explicit consent to take over the data an earlier install of this name left parked. */
  adoptData: boolean;
}

type InstalledApp = BridgeAnswer<"POST /apps/install">;

/** A source is an absolute path with no NUL (app_source_invalid otherwise), checked before the bridge is asked. */
export function requireAbsolute(source: string): void {
  if (!source.startsWith("/") || source.includes("\0")) throw new GatewayError("app_source_invalid");
}

/**
 * The test build only (like X-Test-Now): `X-Test-Fail: record` makes the record step of an
 * install or an update fail after the folder moved into place, to prove it is undone.
 */
export function injectedRecordFailure(req: RouteRequest<unknown, unknown>): void {
  if (TEST_BUILD) {
    if (req.c.req.header("x-test-fail") === "record") throw new Error("injected failure of the record step");
  }
}

/** Installs a folder the owner consented to; nothing is installed on any failure before the record. */
export async function installApp(req: RouteRequest<unknown, unknown>, request: InstallRequest) {
  requireAbsolute(request.source);
  const registry = appRegistry(req.env);
  const takenNames = await registry.names();
  const installed = await auditedRefusal(req, "app_install_failed", request.source, () =>
    bridgeInstall(req.env, request, takenNames),
  );
  await auditedRefusal(req, "app_install_failed", request.source, () => recordInstall(req, request.source, installed));
  // Recorded: the install's journal goes (a crash before this is settled at the next start).
  await bridgeCall(req.env, "POST /apps/transition-commit", { name: String(installed.manifest.name) }, 60_000);
  const manifest = AppManifestSchema.parse(installed.manifest);
  await auditInstalled(req, request.source, manifest, installed);
  await emitEvent(req.env, "app.installed", { app: manifest.name });
  await startBackend(req.env, manifest.name, manifest, installed.digest);
  // The app is installed now: its servers reach mcp.json and its jobs the schedule (CRON-01).
  const mcp = await registerInstalledServers(req.env, manifest);
  await registry.reconcileJobs(manifest.name, req.now);
  return { app: await registry.get(manifest.name), digest: installed.digest, mcp };
}

/** Step 1, the bridge: stage, consent, packages, hook, move into place (with its journal). */
function bridgeInstall(env: Env, request: InstallRequest, takenNames: string[]): Promise<InstalledApp> {
  return bridgeCall(
    env,
    "POST /apps/install",
    {
      source: request.source,
      consent: request.consent,
      takenNames,
      installId: request.installId,
      adoptData: request.adoptData,
    },
    900_000,
  );
}

/**
 * Step 2, the record. The folder is in place now; if the record cannot be written, the move is
 * undone so the name is free again and nothing is left behind (issue 11 item 6).
 */
async function recordInstall(
  req: RouteRequest<unknown, unknown>,
  source: string,
  installed: InstalledApp,
): Promise<void> {
  const name = String(installed.manifest.name);
  let added: boolean;
  try {
    const record = installRecord(installed, source, req.now);
    injectedRecordFailure(req);
    added = await appRegistry(req.env).add(record);
  } catch (error) {
    await undoInstall(req.env, name, installed);
    throw error instanceof GatewayError
      ? error
      : new GatewayError("install_step_failed", {
          vars: { step: "record", reason: error instanceof Error ? error.message : String(error) },
          detail: { step: "record" },
        });
  }
  if (!added) {
    await undoInstall(req.env, name, installed);
    throw new GatewayError("app_exists", { vars: { name } });
  }
}

/** The record of a fresh local install: enabled, its consented review kept for later updates. */
function installRecord(installed: InstalledApp, source: string, now: number): AppRecord {
  const manifest = AppManifestSchema.parse(installed.manifest);
  return {
    name: manifest.name,
    displayName: manifest.displayName ?? manifest.name,
    version: manifest.version,
    origin: "local",
    source,
    resources: "gateway",
    lifecycle: "gateway",
    enabled: true,
    manifest,
    consentDigest: installed.digest,
    installedAt: new Date(now).toISOString(),
    uiRevision: uiRevisionOf(manifest, installed.digest),
    uiFiles: installed.uiFiles,
    review: installed.review,
  };
}

/** Undoes the bridge's move into place: the folder goes and adopted data is parked again. */
async function undoInstall(env: Env, name: string, installed: InstalledApp): Promise<void> {
  await bridgeCall(env, "POST /apps/install-undo", { name, adoptedData: installed.adoptedData }, 60_000);
}

function auditInstalled(
  req: RouteRequest<unknown, unknown>,
  source: string,
  manifest: AppManifest,
  installed: InstalledApp,
): Promise<void> {
  return req.audit({
    kind: "app_installed",
    outcome: "allowed",
    subject: manifest.name,
    detail: {
      consent: installed.digest,
      source,
      version: manifest.version,
      adopted_data: installed.adoptedData ? installed.adoptedData.version : null,
    },
  });
}

/** The app is recorded: a mcp.json that cannot be written is said in the answer, not undone. */
function registerInstalledServers(env: Env, manifest: AppManifest) {
  return registerMcpServers(env, manifest.name, manifest).catch((error: unknown) => {
    if (error instanceof GatewayError)
      return { registered: [], skipped: [], removed: [], error: error.toEnvelope().error };
    throw error;
  });
}
