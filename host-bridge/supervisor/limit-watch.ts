// A backend's limits, held while it runs: a process limit reached (a fork bomb) or data/ past
// its share of the storage limit stops the whole sandbox, and every limit a run reached is
// logged and reported once (onLimit: a security-log row), including the ones the kernel
// enforced by killing it.
import { describeLimits, LIMIT_WORDS } from "../sandbox/bounds.js";
import { signalProcessGroup } from "../process-group.js";
import {
  folderBytes,
  storageLimitReason,
  storageShares,
  watchStorage as watchDataFolder,
} from "../sandbox/storage-limit.js";
import type { BackendSpec } from "./backend-supervisor.js";
import { spawnFailed, type LaunchRefusal } from "./launch-steps.js";
import type { Supervision } from "./supervision.js";
import { later, type Tracked } from "./tracked-backend.js";

/** A backend whose data/ already holds more than its share of the storage limit does not start. */
export async function requireStorageRoom(sup: Supervision, spec: BackendSpec): Promise<{ ok: true } | LaunchRefusal> {
  if (!spec.hasStorage) return { ok: true };
  const { dataBytes } = storageShares(sup.opts.limits.storageBytes);
  const used = await folderBytes(spec.dataDir, dataBytes);
  return used > dataBytes ? spawnFailed(storageLimitReason(used, dataBytes)) : { ok: true };
}

/** Checks the run's cgroup each second: a process limit reached is a bomb, so the backend is stopped. */
export function watchLimits(sup: Supervision, t: Tracked, generation: number): void {
  const tick = () => {
    if (generation !== t.generation || !t.running || !t.group) return;
    if (t.group.hits().includes("processes") && !t.limitsReached.includes("processes")) {
      t.limitsReached.push("processes");
      sup.log(
        "error",
        `app ${t.spec.name} backend reached ${LIMIT_WORDS.processes} (${describeLimits(sup.opts.limits)}); stopping it`,
      );
      sup.onLimit(t.spec.name, "processes", sup.opts.limits);
      signalProcessGroup(t.pgid, "SIGKILL"); // bwrap: its pid namespace, and every process in it, goes with it
      return;
    }
    later(t, 1_000, tick);
  };
  later(t, 500, tick);
}

/** Measures data/ each second: past its share of the storage limit, the backend is stopped (its whole sandbox) and the stop reported. */
export function watchStorage(sup: Supervision, t: Tracked, generation: number): void {
  const { dataBytes } = storageShares(sup.opts.limits.storageBytes);
  t.storage?.stop();
  t.storage = watchDataFolder({
    dataDir: t.spec.dataDir,
    dataBytes,
    onExceeded: (used) => {
      if (generation !== t.generation || !t.running) return;
      t.limitsReached.push("storage");
      sup.log(
        "error",
        `app ${t.spec.name} backend reached ${LIMIT_WORDS.storage}: ${storageLimitReason(used, dataBytes)}; stopping it`,
      );
      sup.onLimit(t.spec.name, "storage", sup.opts.limits, used);
      signalProcessGroup(t.sandboxPgid, "SIGKILL");
      signalProcessGroup(t.pgid, "SIGKILL");
    },
  });
}

/** At the run's exit: the limits its cgroup says it reached and nobody noted yet are logged and reported, and the group goes. */
export function settleLimitsAtExit(sup: Supervision, t: Tracked): void {
  if (!t.group) return;
  const name = t.spec.name;
  for (const hit of t.group.hits()) {
    if (t.limitsReached.includes(hit)) continue;
    t.limitsReached.push(hit);
    sup.log("error", `app ${name} backend reached ${LIMIT_WORDS[hit]} (${describeLimits(sup.opts.limits)})`);
    sup.onLimit(name, hit, sup.opts.limits);
  }
  t.group.remove();
  t.group = null;
}
