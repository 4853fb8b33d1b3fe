// Picks a free port: the gateway's own for `start --port 0`, and each backend's PORT.
import net from "node:net";

/**
 * Asks the kernel for a free port on `host` and releases it. Another process could take it
 * before its user binds: `start` then finds the port taken, and a backend exits and the
 * watchdog restarts it on a new port.
 */
export function pickFreePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("the kernel returned no port"))));
    });
  });
}
