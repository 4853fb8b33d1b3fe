// One run of a backend: the hardening steps (launch-steps.ts) called in one visible order, least
// reversible (the spawn) last, and what a step opened is given back when a later one refuses.
//
// Dying with the bridge: sandboxed, bwrap --die-with-parent has the kernel SIGKILL the backend
// when the bridge dies. Unsandboxed (sandbox.mode = "off") there is no such guarantee: Node
// cannot call prctl(PR_SET_PDEATHSIG) between fork and exec, so after a hard kill the backend
// lives on until the next bridge's reapOrphans. (util-linux `setpriv --pdeathsig KILL` could be
// prepended; not done, the opt-out stays the plain command.)
import { describeLimits, type BoundsAvailability } from "../sandbox/bounds.js";
import {
  closeGrantedFolders,
  folderEnvironment,
  folderMounts,
  withFolderDescriptors,
} from "../sandbox/granted-folders.js";
import { openSlot, reserveAddress } from "./backend-address.js";
import { startupPoll } from "./health-watch.js";
import {
  boundsOf,
  childEnvironment,
  confinedCommand,
  createBoundsGroup,
  openFolders,
  prepareAppFolders,
  requireSandbox,
  spawnFailed,
  startEgressBroker,
  writeSecretFile,
  type LaunchResult,
} from "./launch-steps.js";
import { requireStorageRoom, watchLimits, watchStorage } from "./limit-watch.js";
import { readSandboxStreams, trackRun } from "./run-tracking.js";
import { withListener } from "./slot-listener.js";
import { closeInheritedFds, spawnChild } from "./spawn-child.js";
import { emit } from "./status-report.js";
import type { Supervision } from "./supervision.js";
import type { Tracked } from "./tracked-backend.js";

/**
 * One run of a backend, as named steps in one visible order: the cheap, reversible ones
 * first (address, folders, secret file, sandbox check, bounds group, descriptors, environment,
 * egress broker, socket slot), then the confined command, and last the spawn itself.
 */
export async function launchRun(sup: Supervision, t: Tracked): Promise<LaunchResult> {
  const generation = ++t.generation;
  t.stopping = false;
  t.gaveUp = false;
  const address = await reserveAddress(sup, t);
  if (!address.ok) return address;
  if (t.stopping || generation !== t.generation) return spawnFailed("stopped before it started");
  const folders = prepareAppFolders(t.spec);
  if (!folders.ok) return folders;
  const room = await requireStorageRoom(sup, t.spec);
  if (!room.ok) return room;
  const secretFile = writeSecretFile(sup, t);
  if (!secretFile.ok) return secretFile;
  const sandbox = requireSandbox(sup);
  if (!sandbox.ok) return sandbox;
  const bounds = boundsOf(sup);
  const group = createBoundsGroup(sup, t.spec, sandbox.availability, bounds);
  if (!group.ok) return group;
  const granted = openFolders(sup, t.spec, sandbox.availability);
  if (!granted.ok) {
    group.group?.remove();
    return granted;
  }
  const stdio = withFolderDescriptors(
    closeInheritedFds(sandbox.availability !== null, group.group !== null),
    sandbox.availability !== null ? granted.folders : [],
  );
  const env = childEnvironment(sup, t, address.port, sandbox.availability !== null);
  Object.assign(env, folderEnvironment(granted.folders, sandbox.availability !== null));
  const egress = await startEgressBroker(sup, t, sandbox.availability, env);
  if (!egress.ok) {
    closeGrantedFolders(granted.folders);
    group.group?.remove();
    return egress;
  }
  const listener = await openSlot(sup, sandbox.availability, address.slot);
  if (!listener.ok) {
    closeGrantedFolders(granted.folders);
    group.group?.remove();
    return listener;
  }
  const command = confinedCommand(sup, t.spec, env, sandbox.availability, bounds, {
    port: address.port,
    egressSocket: egress.socket,
    blocked: group.group !== null,
    folders: folderMounts(granted.folders),
  });
  const child = spawnChild(command, {
    env,
    stdio: listener.listener ? withListener(stdio, listener.listener.fd) : stdio,
    boxed: sandbox.availability !== null,
    log: (line) => sup.log("warning", line),
  });
  // bwrap holds the folders now (its binds are made from its own copies of the descriptors).
  closeGrantedFolders(granted.folders);
  // The child holds the listening socket now: it moves to the slot's path, and the bridge lets go of it.
  listener.listener?.handOver();
  trackRun(sup, t, generation, child, { env, port: address.port, slot: address.slot, group: group.group });
  if (child.pid !== undefined) {
    const confined = sandbox.availability !== null;
    if (confined) readSandboxStreams(sup, t, generation, child);
    announceStarted(sup, t, child.pid, confined, address, bounds);
    if (group.group) watchLimits(sup, t, generation);
    if (t.spec.hasStorage) watchStorage(sup, t, generation);
    emit(sup, t);
    startupPoll(sup, t, generation);
  }
  return { ok: true };
}

/** The log line of a started run: where it listens, how it is confined and bounded, and what network it has. */
function announceStarted(
  sup: Supervision,
  t: Tracked,
  pid: number,
  confined: boolean,
  address: { port: number; slot: number | null },
  bounds: BoundsAvailability,
): void {
  const grant = t.spec.network ?? [];
  const network =
    grant === "all" ? "any public host" : grant.length > 0 ? `egress to ${grant.length} host pattern(s)` : "no network";
  sup.log(
    "info",
    `app ${t.spec.name} backend started (pid ${pid}, ${confined ? `slot ${address.slot}, confined, ${bounds.mechanism} bounds of ${describeLimits(sup.opts.limits)}, ${network}` : `port ${address.port}, unsandboxed`})`,
  );
}
