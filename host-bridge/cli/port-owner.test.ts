import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { isPortFree, isPortListenerOwnedBy, portInUseMessage } from "./port-owner";

describe("port ownership", () => {
  it("a port this process listens on is taken and owned by this process, not by its parent", async () => {
    const server = createServer();
    const port = await new Promise<number>((r) =>
      server.listen(0, "127.0.0.1", () => r((server.address() as { port: number }).port)),
    );
    try {
      expect(await isPortFree("127.0.0.1", port)).toBe(false);
      expect(isPortListenerOwnedBy(process.pid, port)).toBe(true);
      expect(isPortListenerOwnedBy(process.ppid, port)).toBe(false);
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(await isPortFree("127.0.0.1", port)).toBe(true);
    expect(isPortListenerOwnedBy(process.pid, port)).toBe(false);
  });
  it("names the port and both ways out", () => {
    expect(portInUseMessage(10000)).toBe("Port 10000 is in use by another program; use --port 0 or --port N");
  });
});
