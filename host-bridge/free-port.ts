// Picks a free port: the gateway's own for `start --port 0`, and each backend's PORT.
import { readFileSync } from "node:fs";
import net from "node:net";

// Linux's default when /proc does not say.
const DEFAULT_EPHEMERAL = { low: 32768, high: 60999 };
const LOWEST_PICKED = 10_000;
const TRIES_BELOW = 20;

/** The kernel's ephemeral range: the ports it hands to a `bind(0)` or an outgoing connection. */
export function ephemeralRange(text?: string): { low: number; high: number } {
  let range = text;
  try {
    range ??= readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8");
  } catch {
    return DEFAULT_EPHEMERAL;
  }
  const [low, high] = range.trim().split(/\s+/).map(Number);
  if (!Number.isInteger(low) || !Number.isInteger(high) || low! < 1 || high! > 65535 || low! > high!)
    return DEFAULT_EPHEMERAL;
  return { low: low!, high: high! };
}

/** Binds `port` on `host` (0: any) and releases it; answers the port bound, or null when it is taken. */
function tryPort(host: string, port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" || error.code === "EACCES" ? resolve(null) : reject(error),
    );
    server.listen({ host, port, exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : 0;
      server.close(() => (bound > 0 ? resolve(bound) : reject(new Error("the kernel returned no port"))));
    });
  });
}

/**
 * A port free on `host` now, released for its user to bind. Chosen below the kernel's ephemeral
 * range, where no outgoing connection and no other `bind(0)` is ever given a port, so the
 * moment between this answer and its user's bind is not a race with every socket on the
 * machine; only a program that names the very port could take it. When that range is too
 * small or full, the kernel picks one of its own. Another process could still take it: `start`
 * then finds the port taken, and a backend exits and the watchdog restarts it on a new port.
 */
export async function pickFreePort(host = "127.0.0.1", range = ephemeralRange()): Promise<number> {
  const below = range.low - LOWEST_PICKED;
  if (below >= 1_000) {
    for (let i = 0; i < TRIES_BELOW; i++) {
      const port = await tryPort(host, LOWEST_PICKED + Math.floor(Math.random() * below));
      if (port !== null) return port;
    }
  }
  const port = await tryPort(host, 0);
  if (port === null) throw new Error("no free port");
  return port;
}
