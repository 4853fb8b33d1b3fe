// Who owns the gateway's port. `start` checks the port is free before it writes a config, and
// sends its internal credential only once the listening socket on the port is provably
// workerd's own (its inode is among workerd's open files): a program that took the port first,
// or in the moment between, never receives the credential.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";

/** Resolves true when `host:port` can be bound right now. */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once("error", () => resolvePromise(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolvePromise(true)));
  });
}

/** The sentence `start` prints when its port is taken. */
export function portInUseMessage(port: number): string {
  return `Port ${port} is in use by another program; use --port 0 or --port N`;
}

/** Socket inodes listening on `port` (TCP, IPv4 and IPv6) in this network namespace. */
export function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== "0A") continue; // 0A: LISTEN
      const localPort = parseInt(fields[1].split(":").pop() ?? "", 16);
      if (localPort === port) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/** True when some socket listening on `port` is an open file of process `pid`, and no other process's listener exists beside it. */
export function isPortListenerOwnedBy(pid: number, port: number): boolean {
  const listening = listeningInodes(port);
  if (listening.size === 0) return false;
  const owned = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) owned.add(match[1]);
      } catch {
        // Closed meanwhile.
      }
    }
  } catch {
    return false;
  }
  for (const inode of listening) if (!owned.has(inode)) return false;
  return true;
}
