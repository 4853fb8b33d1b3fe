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

/** The socket file of a slot, inside the bridge's runtime folder. */
export function slotSocketName(slot: number): string {
  return `slot-${slot}.sock`;
}
