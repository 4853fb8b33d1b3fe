// A kept connection to a secret origin serves that origin and vetted address only: a request
// to another origin on the same address opens its own (its certificate was verified for
// another name), and one to the same pair reuses it.
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSecretOrigin, type SecretOrigin } from "../../kernel/contracts/secret-delivery";
import { OriginConnections } from "./origin-connections";

let server: http.Server;
let port: number;

beforeAll(async () => {
  server = http.createServer((req, res) => res.end(`${req.url}`));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => server.close());

function get(pool: OriginConnections, origin: SecretOrigin, opened: string[]): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = pool.request(origin, "127.0.0.1", { method: "GET", path: "/", headers: ["Host", origin.host] }, () => {
      opened.push(origin.origin);
      return Promise.resolve(net.connect(port, "127.0.0.1"));
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(req.reusedSocket));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("kept origin connections", () => {
  it("reuse a connection for the same origin and address, never for another origin on that address", async () => {
    const pool = new OriginConnections();
    const a = { ...(parseSecretOrigin("https://a.example.com") as SecretOrigin), port };
    const b = { ...(parseSecretOrigin("https://b.example.com") as SecretOrigin), port };
    const opened: string[] = [];
    try {
      expect(await get(pool, a, opened)).toBe(false);
      expect(await get(pool, a, opened)).toBe(true);
      expect(await get(pool, b, opened)).toBe(false);
      expect(await get(pool, b, opened)).toBe(true);
      expect(opened).toEqual(["https://a.example.com", "https://b.example.com"]);
    } finally {
      pool.close();
    }
  });

  it("keeps every connection a burst of concurrent requests opened: the next burst opens none", async () => {
    const pool = new OriginConnections();
    const a = { ...(parseSecretOrigin("https://a.example.com") as SecretOrigin), port };
    const opened: string[] = [];
    try {
      const burst = () => Promise.all(Array.from({ length: 10 }, () => get(pool, a, opened)));
      expect((await burst()).every((reused) => !reused)).toBe(true);
      expect(opened).toHaveLength(10);
      expect((await burst()).every((reused) => reused)).toBe(true);
      expect(opened).toHaveLength(10);
    } finally {
      pool.close();
    }
  });
});
