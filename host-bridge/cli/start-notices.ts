// What a start tells the owner about the home it found, once gateway.log is open: settings that
// loosen or bend the defaults, staging files a killed write left (removed here), a security-log
// anchor that was lost or set back (recorded, so doctor fails until the owner acknowledges it),
// and a missing setpriv.
import { sessionTtlInForce } from "../owner-config";
import { recordUnacknowledgedAnchor } from "../sel-anchor";
import { parentEnvironment } from "../settings";
import { sweepHomeStagingFiles } from "../staging-sweep";
import { restartRecordedAnchor } from "../state-manifest";
import { findSetpriv } from "../supervisor/workerd-supervisor";
import { commandHint } from "./invocation";
import type { StartPlan } from "./start-preflight";

/** Warns about the settings in force and sweeps the home's staging files, each noted in the log. */
export function noteStartConditions(plan: StartPlan, log: (line: string) => void): void {
  const { mode, config, paths } = plan;
  if (mode.warning) {
    process.stderr.write(`personalclaw: warning: ${mode.warning}\n`);
    log(`warning: ${mode.warning}`);
  }
  if (TEST_BUILD) log("warning: this is the test build: X-Test-Now moves the clock and /api/test/* is open");
  const swept = sweepHomeStagingFiles(paths.home);
  if (swept.length > 0) log(`removed ${swept.length} staging files a killed write left behind: ${swept.join(", ")}`);
  if (config.sandbox.mode === "off") log("warning: sandbox.mode is off: app backends run without bubblewrap");
  if (sessionTtlInForce(config).capped)
    log(
      `warning: auth.session_ttl in config.json is ${config.auth.session_ttl} s, above the 90-day limit; browser sign-ins last 90 days`,
    );
}

/**
 * The security-log anchor as the start found it: missing, unreadable or set back (below the seq
 * this home last saw it at; the anchor only moves forward) is recorded as unacknowledged, a new
 * anchor starts from the current head, and the owner is warned. Answers how it was lost, or null.
 */
export function settleLostAnchor(plan: StartPlan, log: (line: string) => void): string | null {
  const { anchorAtStart, manifest, paths } = plan;
  const anchorSetBack =
    "anchor" in anchorAtStart && manifest?.anchorSeq !== undefined && anchorAtStart.anchor.seq < manifest.anchorSeq
      ? `set back (seq ${anchorAtStart.anchor.seq}, after it was seen at ${manifest.anchorSeq})`
      : null;
  const anchorLost =
    anchorAtStart.state === "ok"
      ? anchorSetBack
      : anchorAtStart.state === "missing"
        ? "missing"
        : `unreadable (${anchorAtStart.reason})`;
  if (anchorLost !== null) {
    recordUnacknowledgedAnchor(paths.home, anchorLost);
    restartRecordedAnchor(paths.home, "anchor" in anchorAtStart ? anchorAtStart.anchor.seq : 0);
    const warning = `warning: the security-log anchor ${paths.selAnchor} is ${anchorLost}: truncation of the log before now cannot be detected. A new anchor starts from the current head; \`${commandHint("doctor")}\` fails until you run \`${commandHint("security", "acknowledge")}\`.`;
    process.stderr.write(`personalclaw: ${warning}\n`);
    log(warning);
  }
  return anchorLost;
}

/** The setpriv that ties workerd to this process, or null (logged: workerd may then outlive a killed gateway). */
export function findSetprivOrWarn(log: (line: string) => void): string | null {
  const setpriv = findSetpriv(parentEnvironment().PATH);
  if (setpriv === null)
    log(
      "warning: setpriv (util-linux) is missing: workerd cannot be tied to this process and may outlive it if it is killed",
    );
  return setpriv;
}
