// Where a backend listens and where the bridge and the gateway reach it. Confined, it listens on
// CONFINED_BACKEND_PORT inside its own network namespace and is reached through its socket slot,
// which the app keeps while it is tracked and no two apps ever share; unconfined, it listens on
// a free loopback port.
import path from "node:path";
import { errorMessage } from "../../kernel/contracts/errors.js";
import { BACKEND_SLOTS, slotSocketName } from "../../kernel/contracts/backend-slots.js";
import type { SandboxAvailability } from "../sandbox/bubblewrap.js";
import { pickFreePort } from "../free-port.js";
import type { HealthEndpoint } from "./health-probe.js";
import { spawnFailed, type LaunchRefusal } from "./launch-steps.js";
import { openSlotListener, type SlotListener } from "./slot-listener.js";
import type { Supervision } from "./supervision.js";
import type { Tracked } from "./tracked-backend.js";

/** The port a confined backend listens on inside its own network namespace (PORT). */
export const CONFINED_BACKEND_PORT = 8080;

/** Where the health probe reaches a backend: its slot's socket when confined, else its port. */
export function endpointOf(sup: Supervision, t: Tracked): HealthEndpoint {
  return t.slot !== null
    ? { socketPath: path.join(sup.opts.runtimeDir, slotSocketName(t.slot)) }
    : { port: t.port as number };
}

/** The slot an app keeps while it is tracked here, or a free one; null when every slot is taken. */
function slotFor(sup: Supervision, t: Tracked): number | null {
  if (t.slot !== null) return t.slot;
  const taken = new Set(
    [...sup.tracked.values(), ...sup.successors.values()]
      .map((other) => other.slot)
      .filter((s): s is number => s !== null),
  );
  for (let slot = 0; slot < BACKEND_SLOTS; slot += 1) if (!taken.has(slot)) return slot;
  return null;
}

/**
 * Confined, the backend listens on CONFINED_BACKEND_PORT inside its own network namespace and
 * the gateway reaches it through a socket slot; unconfined, on a free host port.
 */
export async function reserveAddress(
  sup: Supervision,
  t: Tracked,
): Promise<{ ok: true; port: number; slot: number | null } | LaunchRefusal> {
  if (sup.opts.sandbox.mode !== "on") {
    try {
      return { ok: true, port: await pickFreePort(), slot: null };
    } catch (cause) {
      return spawnFailed(`no free loopback port: ${String(cause)}`, cause);
    }
  }
  const slot = slotFor(sup, t);
  if (slot === null)
    return {
      ok: false,
      code: "backend_slots_exhausted",
      reason: errorMessage("backend_slots_exhausted", { slots: BACKEND_SLOTS }),
    };
  // Claimed now, not when the child runs: a start awaits several steps before it spawns, and
  // a second app starting meanwhile (every app at a gateway start) would pick the same free
  // slot, so both listened at one socket path and the gateway sent one app's requests and
  // job fires to the other's backend (whose verifier refused them: 401).
  t.slot = slot;
  return { ok: true, port: CONFINED_BACKEND_PORT, slot };
}

/** The listening socket of a confined backend's slot, made by the bridge (slot-listener.ts); none unconfined. */
export async function openSlot(
  sup: Supervision,
  sandbox: SandboxAvailability | null,
  slot: number | null,
): Promise<{ ok: true; listener: SlotListener | null } | LaunchRefusal> {
  if (!sandbox || slot === null) return { ok: true, listener: null };
  try {
    return { ok: true, listener: await openSlotListener(sup.opts.runtimeDir, slot) };
  } catch (cause) {
    return spawnFailed(`its socket slot could not be opened: ${String(cause)}`, cause);
  }
}
