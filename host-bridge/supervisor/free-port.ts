// Picks a free loopback port for a backend's PORT.
import net from "node:net";

/**
 * Asks the kernel for a free port on 127.0.0.1 and releases it. Another process could take it
 * before the backend binds; the backend then exits and the watchdog restarts it on a new port.
 */
export function allocateLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("the kernel returned no port"))));
    });
  });
}
