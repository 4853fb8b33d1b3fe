import net from "node:net";
import { describe, expect, it } from "vitest";
import { ephemeralRange, pickFreePort } from "./free-port";

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

describe("pickFreePort", () => {
  it("picks a free port below the kernel's ephemeral range, which no other socket is handed on its own", async () => {
    const range = ephemeralRange();
    for (let i = 0; i < 20; i++) {
      const port = await pickFreePort("127.0.0.1");
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(range.low);
      expect(await bindable(port)).toBe(true);
    }
  });

  it("leaves the choice to the kernel when the room below its range is too small", async () => {
    const real = ephemeralRange();
    const port = await pickFreePort("127.0.0.1", { low: 10_500, high: 60_999 });
    expect(port).toBeGreaterThanOrEqual(real.low);
    expect(port).toBeLessThanOrEqual(real.high);
  });

  it("reads the range /proc gives, and the Linux default from anything else", () => {
    expect(ephemeralRange("32768\t60999\n")).toEqual({ low: 32768, high: 60999 });
    expect(ephemeralRange("40000 50000")).toEqual({ low: 40000, high: 50000 });
    for (const text of ["", "x y", "50000 40000", "0 70000"])
      expect(ephemeralRange(text)).toEqual({ low: 32768, high: 60999 });
  });
});
