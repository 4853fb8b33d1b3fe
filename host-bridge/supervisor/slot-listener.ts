// The listening socket of a confined backend's slot. The bridge makes it (in its own runtime
// folder, which no sandbox sees), hands it to the sandbox as an inherited descriptor, and lets
// go of it. Threat: a socket the app created itself, at a path the app could replace (with a
// link to another app's socket, say), would let it redirect the gateway's traffic for itself.
import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { StdioOptions } from "node:child_process";
import { slotSocketName } from "../../kernel/contracts/backend-slots";
import { withDescriptor } from "./spawn-child";

/** The descriptor the launcher inside the sandbox accepts the gateway's connections on. */
export const SLOT_LISTEN_FD = 5;

export interface SlotListener {
  fd: number;
  /** Once the child holds the socket: moves it to the slot's path and closes the bridge's copy. */
  handOver(): void;
}

/** Binds a fresh socket for `slot`, not yet at the slot's path (the gateway connects only once it is handed over). */
export function openSlotListener(runtimeDir: string, slot: number): Promise<SlotListener> {
  mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
  const temporary = path.join(runtimeDir, `slot-${slot}.${randomBytes(4).toString("hex")}.new`);
  const server = net.createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ path: temporary, backlog: 511 }, () => {
      const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
      // The bridge never accepts on it: its connections are the backend's.
      server.on("connection", (socket) => socket.destroy());
      resolve({
        fd,
        handOver() {
          renameSync(temporary, path.join(runtimeDir, slotSocketName(slot)));
          server.close(); // the bound name moved; closing removes nothing at the slot's path
        },
      });
    });
  });
}

/** The child's descriptors with the slot's listening socket at SLOT_LISTEN_FD. */
export function withListener(stdio: StdioOptions, fd: number): StdioOptions {
  return withDescriptor(stdio, SLOT_LISTEN_FD, fd);
}
