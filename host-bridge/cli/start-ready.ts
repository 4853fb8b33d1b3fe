// From a prepared start to the ready line: workerd spawned and answering on its own port, the
// start written to the security log (and the log's seed taken out of workerd's config), apps
// synced and their backends started, a sign-in link minted, and one ready line printed.
import { verificationCode } from "../../kernel/chain/epoch-key";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import type { HomePaths } from "../home";
import { writePrivateFile } from "../private-file";
import { readAnchor } from "../sel-anchor";
import { describeStateLoss, STATE_MANIFEST_INTERVAL_MS, writeStateManifest } from "../state-manifest";
import { openGatewayDoor } from "../sandbox/child-identity";
import { callGateway } from "./gateway-client";
import type { GatewayRun } from "./gateway-run";
import { commandHint } from "./invocation";
import { appendSecurityRow } from "./lifecycle-row";
import { isPortFree, isPortListenerOwnedBy, portInUseMessage } from "./port-owner";
import { STORE_NAMESPACES } from "./start-preflight";
import { waitForGateway } from "./start-workerd";
import { renderWorkerdConfig } from "./workerd-config";

/** Writes the state manifest (what each store holds, and the anchor's seq); a failure is a log line, not a stop. */
export function recordStateManifest(paths: HomePaths, log: (line: string) => void): void {
  try {
    writeStateManifest(paths.home, paths.state, STORE_NAMESPACES, readAnchor(paths.selAnchor)?.seq ?? null);
  } catch (error) {
    log(`warning state manifest: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Takes the gateway from spawning workerd to the printed ready line; throws when the start fails. */
export async function becomeReady(run: GatewayRun): Promise<void> {
  const { paths } = run.plan;
  await firstWorkerdAnswer(run);
  await recordStartInLog(run);
  await run.runtime.syncNativeApps();
  await run.runtime.startEnabledBackends();
  const link = await callGateway(paths.home, "start", "POST", "/api/auth/startup-link", {});
  if (link.status !== 200) throw new Error(`the startup sign-in link could not be minted (${link.status})`);
  run.recordState();
  run.state.manifestTimer = setInterval(run.recordState, STATE_MANIFEST_INTERVAL_MS);
  run.state.manifestTimer.unref();
  printReadyLine(run, link.body.url);
}

/** Spawns workerd and waits until it answers; a port taken meanwhile is said as such (nothing was sent to it). */
async function firstWorkerdAnswer(run: GatewayRun): Promise<void> {
  const { paths, port, bindHost } = run.plan;
  const workerd = run.workerd.start();
  try {
    await waitForGateway(paths.home, workerd, port, 15_000);
    openGatewayDoor(run.runtimeFolder);
  } catch (error) {
    // workerd could not take the port (someone took it meanwhile): nothing was sent to it.
    if (workerd.pid !== undefined && !isPortListenerOwnedBy(workerd.pid, port) && !(await isPortFree(bindHost, port)))
      throw new Error(portInUseMessage(port), { cause: error });
    throw error;
  }
}

/** The start's security-log rows (lost state accepted and a lost anchor among them), then the anchor written. */
async function recordStartInLog(run: GatewayRun): Promise<void> {
  const { paths, port, mode, selKey, losses, manifest } = run.plan;
  await appendSecurityRow(paths.home, "gateway_started", { port, auth_mode: mode.mode });
  // The log holds its own epoch key now: the seed leaves the config (a restarted workerd reads it).
  if (selKey.keyHex !== "")
    writePrivateFile(
      paths.workerdConfig,
      renderWorkerdConfig({ ...run.workerdConfig, bindings: { ...run.workerdConfig.bindings, SEL_KEY: "" } }),
    );
  if (losses.length > 0) {
    await appendSecurityRow(paths.home, "state_loss_accepted", {
      stores: losses.map((loss) => ({ store: loss.store, what: loss.what, known_rows: loss.knownRows })),
    });
    process.stderr.write(
      `personalclaw: warning: continuing without lost state (--accept-state-loss):\n${describeStateLoss(paths.state, manifest!, losses)}\n`,
    );
  }
  if (run.anchorLost !== null)
    await appendSecurityRow(paths.home, "sel_anchor_lost", { anchor: run.anchorLost }, "error");
  await run.anchor
    .flush()
    .catch((error) => run.log(`sel anchor: ${error instanceof Error ? error.message : String(error)}`));
}

/**
 * What the first start prints before the sign-in link: the log's verification code, what it is
 * for and what to do with it, so it is not mistaken for a sign-in code or a password.
 */
export function securityLogCodeText(code: string, sealed: boolean): string {
  return [
    "This is a new home. Its security log's verification code, shown only now:",
    `  ${code}`,
    "Keep it somewhere other than this computer (a password manager, paper). It is not a password and signs",
    `nobody in: with it, \`${commandHint("security", "verify", "--seed", "<code>")}\` proves that no row of the`,
    `log was edited, removed or reordered, even by someone who had this computer.${sealed ? " A copy is sealed to your passphrase in sel_seed.sealed." : ""}`,
    "",
  ].join("\n");
}

/** The one ready line (JSON with --json-ready); at a home's first start the log's verification code, to the terminal only. */
function printReadyLine(run: GatewayRun, url: string): void {
  const { paths, port, selKey } = run.plan;
  const { options } = run;
  const { settings } = options;
  // The seed is shown once, at the first start, to the owner's terminal only (never to gateway.log).
  const code = selKey.firstSeed === null ? null : verificationCode(selKey.firstSeed);
  if (code !== null && !options.jsonReady) {
    process.stdout.write(securityLogCodeText(code, settings.seedPassphrase ? true : false));
  }
  if (options.jsonReady) {
    process.stdout.write(
      `${JSON.stringify({ url, port, home: paths.home, pid: process.pid, ...(code !== null ? { sel_verification_code: code } : {}) })}\n`,
    );
  } else {
    process.stdout.write(
      `PersonalClaw is running at http://127.0.0.1:${port}/ — sign in: ${url} (a new link at any time: ${commandHint("token")})\n`,
    );
  }
}

/** The sentence a failed start ends with; a full disk is named as such. */
export function reportStartFailure(home: string, error: unknown): void {
  const full = storageFullReason(error);
  const why =
    full !== null
      ? `the disk holding ${home} is full (${full}); free some space and start again`
      : error instanceof Error
        ? error.message
        : String(error);
  process.stderr.write(`personalclaw: start failed: ${why}\n`);
}
