// How the gateway reaches a confined backend: not a loopback TCP port (which any page in the
// owner's browser or any other app could open) but one of a fixed set of UNIX sockets in the
// bridge's runtime folder, each a workerd service binding. The bridge hands a backend's
// sandbox the listening socket of the slot it assigns; the record names the slot.

/** Confined backends that can run at once. */
export const BACKEND_SLOTS = 64;

/** The worker binding of a slot. */
export function slotBinding(slot: number): `APP_SLOT_${number}` {
  return `APP_SLOT_${slot}`;
}

/**
 * The folder (inside the runtime folder) holding the gateway's own UNIX socket, the one way a
 * confined backend calls the gateway back: bound read-only into each backend's sandbox, where
 * the launcher serves it as 127.0.0.1:<gateway port>. A folder, not the socket itself, so a
 * restarted workerd's new socket is seen by backends that are already running.
 */
export const GATEWAY_SOCKET_FOLDER = "gateway";
export const GATEWAY_SOCKET_NAME = "gateway.sock";

/** The socket file of a slot, inside the bridge's runtime folder. */
export function slotSocketName(slot: number): string {
  return `slot-${slot}.sock`;
}
