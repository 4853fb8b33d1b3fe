// A missed health probe says what the backend did instead, so a failed start or update can tell
// the owner why: the status and the first line of a refusing answer's body, made safe to print.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeHealth } from "./health-probe";

describe("a health probe's answer", () => {
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/ok") return res.writeHead(204).end();
      if (req.url === "/sick")
        return res
          .writeHead(500)
          .end("\n  database is \u001b[31mlocked\u001b[0m  \nTraceback (most recent call last):\n");
      if (req.url === "/long") return res.writeHead(503).end(`${"x".repeat(10_000)}\n`);
      if (req.url === "/moved") return res.writeHead(302, { location: "/ok" }).end();
      if (req.url === "/empty") return res.writeHead(500).end();
      if (req.url === "/leaky") return res.writeHead(500).end("cannot log in with violet harbor lantern\n");
      // /drip: headers, then nothing more.
      res.writeHead(200);
      res.write("a");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("is healthy for a whole 2xx answer", async () => {
    expect(await probeHealth({ port }, "/ok", 2_000)).toEqual({ ok: true });
  });

  it("names a refusing answer's status and its body's first line, with control characters made harmless", async () => {
    const answer = await probeHealth({ port }, "/sick", 2_000);
    expect(answer.ok).toBe(false);
    const miss = (answer as { miss: string }).miss;
    expect(miss).toMatch(/^answered 500: database is .*locked/);
    expect(miss).not.toContain("\u001b");
    expect(miss).not.toContain("Traceback");
    expect(await probeHealth({ port }, "/empty", 2_000)).toEqual({ ok: false, miss: "answered 500" });
    expect(await probeHealth({ port }, "/moved", 2_000)).toEqual({ ok: false, miss: "answered 302" });
  });

  it("masks the values the run's answers must never carry, as its log lines do", async () => {
    const answer = (await probeHealth({ port }, "/leaky", 2_000, ["violet harbor lantern"])) as {
      ok: false;
      miss: string;
    };
    expect(answer.miss).toMatch(/^answered 500: cannot log in with \*+$/);
  });

  it("keeps a long first line to a bound", async () => {
    const answer = (await probeHealth({ port }, "/long", 2_000)) as { ok: false; miss: string };
    expect(answer.miss.startsWith("answered 503: xxx")).toBe(true);
    expect(answer.miss.length).toBeLessThanOrEqual("answered 503: ".length + 200);
  });

  it("says when nothing listens and when no whole answer comes in time", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await probeHealth({ port: closedPort }, "/ok", 2_000)).toEqual({
      ok: false,
      miss: "could not be reached (ECONNREFUSED)",
    });
    expect(await probeHealth({ port }, "/drip", 300)).toEqual({
      ok: false,
      miss: "gave no whole answer within 300 ms",
    });
  });
});
