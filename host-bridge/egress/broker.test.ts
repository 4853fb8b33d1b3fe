// The egress broker over a real UNIX socket, with a local upstream on another loopback address
// standing in for "the internet": what passes, what is refused, and that each is a decision.
import http from "node:http";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseHostPattern, type HostPattern } from "../../kernel/rules/network-grant";
import { startBroker, type EgressBroker, type EgressDecision } from "./broker";
import { canonicalAddress, vetAddress } from "./address-policy";

let dir: string;
let upstream: http.Server;
let upstreamPort: number;
let upstream6: http.Server;
let upstream6Port: number;
/** TCP connections the upstreams accepted: a refused request must add none. */
let upstreamConnections = 0;
/** Request targets the upstreams were asked for. */
const upstreamSaw: string[] = [];
let broker: EgressBroker;
const decisions: EgressDecision[] = [];
const names: Record<string, string[]> = {
  "api.example.test": ["127.0.0.2"], // a granted name that resolves to a local address: rebinding
  "public.example.test": ["93.184.216.34"],
  "meta.example.test": ["169.254.169.254"],
};

function patterns(...texts: string[]): HostPattern[] {
  return texts.map((t) => parseHostPattern(t) as HostPattern);
}

/** Sends one raw request head through the broker socket; answers the first response line and body. */
function send(head: string): Promise<{ status: string; text: string }> {
  return sendTo(broker, head);
}

function sendTo(to: EgressBroker, head: string): Promise<{ status: string; text: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(to.socketPath);
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("close", () => resolve({ status: text.split("\r\n")[0] ?? "", text }));
    socket.on("error", () => resolve({ status: "error", text }));
    socket.write(head);
    setTimeout(() => socket.end(), 1500);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "pc-egress-"));
  const echo = (req: http.IncomingMessage, res: http.ServerResponse) => {
    upstreamSaw.push(req.url ?? "");
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("latin1")));
    req.on("end", () =>
      res.end(
        `upstream saw ${req.method} ${req.url} host=${req.headers.host} body=${JSON.stringify(body)} headers=${Object.keys(req.headers).sort().join(",")}`,
      ),
    );
  };
  upstream = http.createServer(echo);
  upstream.on("connection", () => (upstreamConnections += 1));
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.2", r));
  upstreamPort = (upstream.address() as net.AddressInfo).port;
  upstream6 = http.createServer(echo);
  await new Promise<void>((r) => upstream6.listen(0, "::1", r));
  upstream6Port = (upstream6.address() as net.AddressInfo).port;
  broker = await startBroker({
    app: "egress-test",
    grant: patterns(
      `127.0.0.2:${upstreamPort}`,
      `[::1]:${upstream6Port}`,
      "api.example.test:*",
      "public.example.test:443",
      "meta.example.test:80",
      "*.wild.example.test",
    ),
    socketPath: path.join(dir, "e.sock"),
    onDecision: (d) => decisions.push(d),
    resolve: async (host) => {
      const found = names[host];
      if (!found) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return found;
    },
    connectTimeoutMs: 1000,
  });
});

afterAll(async () => {
  await broker.close();
  upstream.close();
  upstream6.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("egress broker", () => {
  it("its socket is the owner's alone (0600)", () => {
    expect(statSync(broker.socketPath).mode & 0o777).toBe(0o600);
  });

  it("tunnels CONNECT to an address the grant names, and proxies an absolute-form http:// request", async () => {
    const tunnel = await send(
      `CONNECT 127.0.0.2:${upstreamPort} HTTP/1.1\r\nHost: 127.0.0.2:${upstreamPort}\r\n\r\nGET /through HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(tunnel.status).toBe("HTTP/1.1 200 Connection Established");
    expect(tunnel.text).toContain("upstream saw GET /through");
    const plain = await send(
      `GET http://127.0.0.2:${upstreamPort}/plain?q=1 HTTP/1.1\r\nHost: 127.0.0.2:${upstreamPort}\r\nProxy-Authorization: Basic eA==\r\n\r\n`,
    );
    expect(plain.status).toBe("HTTP/1.1 200 OK");
    expect(plain.text).toContain("upstream saw GET /plain?q=1");
    expect(decisions.filter((d) => d.outcome === "allowed" && d.address === "127.0.0.2").length).toBeGreaterThanOrEqual(
      2,
    );
  });

  it("sends upstream the Host of the URL it dialled, never the app's, and no header of the proxy hop", async () => {
    // Behind a granted address the app's Host would choose another virtual host (admin.internal)
    // than the one the owner consented to.
    const answer = await send(
      `GET http://127.0.0.2:${upstreamPort}/vhost HTTP/1.1\r\nHost: admin.internal\r\nHost: second.internal\r\nProxy-Authorization: Basic eA==\r\nConnection: close, X-Drop\r\nX-Drop: 1\r\nX-Keep: 1\r\n\r\n`,
    );
    expect(answer.status).toBe("HTTP/1.1 200 OK");
    expect(answer.text).toContain(`upstream saw GET /vhost host=127.0.0.2:${upstreamPort} `);
    expect(answer.text).toContain("x-keep");
    expect(answer.text).not.toMatch(/admin\.internal|second\.internal|proxy-authorization|x-drop/);
    const plainPort = await send(
      `GET http://127.0.0.2:${upstreamPort}/again HTTP/1.1\r\nHost: 127.0.0.2:${upstreamPort}\r\nConnection: close\r\n\r\n`,
    );
    expect(plainPort.text).toContain(`host=127.0.0.2:${upstreamPort} `);
  });

  it("forwards a request body, sized or chunked, as Node's parser read it", async () => {
    const sized = await send(
      `POST http://127.0.0.2:${upstreamPort}/sized HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`,
    );
    expect(sized.text).toContain("upstream saw POST /sized host=127.0.0.2");
    expect(sized.text).toContain('body="hello"');
    const chunked = await send(
      `POST http://127.0.0.2:${upstreamPort}/chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n`,
    );
    expect(chunked.text).toContain('body="abcde"');
  });

  it("reaches an IPv6 literal the grant names, however the app writes the address", async () => {
    const answer = await send(
      `CONNECT [::1]:${upstream6Port} HTTP/1.1\r\n\r\nGET /six HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe("HTTP/1.1 200 Connection Established");
    expect(answer.text).toContain("upstream saw GET /six");
    const expanded = await send(
      `CONNECT [0:0:0:0:0:0:0:1]:${upstream6Port} HTTP/1.1\r\n\r\nGET /six-expanded HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(expanded.text).toContain("upstream saw GET /six-expanded");
    // An IPv4-mapped spelling of a granted IPv4 literal is that literal.
    const mapped = await send(
      `CONNECT [::ffff:7f00:2]:${upstreamPort} HTTP/1.1\r\n\r\nGET /mapped HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(mapped.status).toBe("HTTP/1.1 200 Connection Established");
    expect(mapped.text).toContain("upstream saw GET /mapped");
  });

  it.each([
    ["Content-Length beside Transfer-Encoding", "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"],
    ["two different Content-Lengths", "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab"],
    ["a header folded over two lines", "X-A: 1\r\n folded: 2\r\n\r\n"],
    ["a header name with a space", "Bad Name: 1\r\n\r\n"],
  ])("refuses a smuggling shape (%s) before any upstream connection", async (_what, rest) => {
    const before = decisions.length;
    const connections = upstreamConnections;
    const answer = await send(`POST http://127.0.0.2:${upstreamPort}/smuggle HTTP/1.1\r\nHost: x\r\n${rest}`);
    expect(answer.status).toBe("HTTP/1.1 400 Bad Request");
    expect(answer.text).toContain("X-PersonalClaw-Egress: egress_bad_request");
    expect(upstreamConnections).toBe(connections);
    expect(decisions.slice(before)).toEqual([
      expect.objectContaining({ outcome: "refused", code: "egress_bad_request" }),
    ]);
  });
});

describe("egress broker: smuggled bytes, oversized heads and its connection cap", () => {
  it("never lets bytes after a request's end reach upstream as a request of their own", async () => {
    // The proxy reads where the body ends as Node does; what follows is the app's next request
    // to the proxy (origin-form here: refused), never raw bytes on the upstream connection.
    const answer = await send(
      `POST http://127.0.0.2:${upstreamPort}/first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(answer.text).toContain("upstream saw POST /first");
    expect(answer.text).toContain("X-PersonalClaw-Egress: egress_bad_request");
    expect(upstreamSaw).not.toContain("/smuggled");
  });

  it("refuses a request head over 8 KiB with egress_bad_request", async () => {
    const answer = await send(`CONNECT 127.0.0.2:${upstreamPort} HTTP/1.1\r\nX-Big: ${"a".repeat(9000)}\r\n\r\n`);
    expect(answer.text).toContain("X-PersonalClaw-Egress: egress_bad_request");
    expect(answer.text).toContain("longer than 8192 bytes");
  });

  it("answers egress_busy past its connection cap, and a closed connection frees its place", async () => {
    const busyDecisions: EgressDecision[] = [];
    const small = await startBroker({
      app: "egress-busy",
      grant: patterns(`127.0.0.2:${upstreamPort}`),
      socketPath: path.join(dir, "busy.sock"),
      onDecision: (d) => busyDecisions.push(d),
      maxTunnels: 1,
    });
    try {
      const held = net.connect(small.socketPath);
      const established = new Promise<void>((r) => held.once("data", () => r()));
      held.write(`CONNECT 127.0.0.2:${upstreamPort} HTTP/1.1\r\n\r\n`);
      await established;
      const refusedTunnel = await sendTo(small, `CONNECT 127.0.0.2:${upstreamPort} HTTP/1.1\r\n\r\n`);
      expect(refusedTunnel.text).toContain("X-PersonalClaw-Egress: egress_busy");
      expect(refusedTunnel.status).toBe("HTTP/1.1 429 Too Many Requests");
      const refusedForward = await sendTo(
        small,
        `GET http://127.0.0.2:${upstreamPort}/busy HTTP/1.1\r\nConnection: close\r\n\r\n`,
      );
      expect(refusedForward.text).toContain("X-PersonalClaw-Egress: egress_busy");
      held.destroy();
      await new Promise((r) => setTimeout(r, 100));
      // Forwarded requests one after another each give their place back when answered.
      for (const i of [1, 2, 3]) {
        const forward = await sendTo(
          small,
          `GET http://127.0.0.2:${upstreamPort}/after-${i} HTTP/1.1\r\nConnection: close\r\n\r\n`,
        );
        expect(forward.text).toContain(`upstream saw GET /after-${i}`);
      }
      expect(busyDecisions.filter((d) => d.code === "egress_busy")).toHaveLength(2);
    } finally {
      await small.close();
    }
  });

  it.each([
    ["an undeclared host", "CONNECT undeclared.example.test:443", "egress_not_declared"],
    ["an undeclared port of a declared address", "CONNECT 127.0.0.2:1", "egress_not_declared"],
    ["an address literal the grant does not name", "CONNECT 127.0.0.1:443", "egress_not_declared"],
    ["a granted name resolving to loopback (rebinding)", "CONNECT api.example.test:443", "egress_address_refused"],
    ["a granted name resolving to the metadata service", "CONNECT meta.example.test:80", "egress_address_refused"],
    ["the apex of a wildcard grant", "CONNECT wild.example.test:443", "egress_not_declared"],
    ["a name that does not resolve", "CONNECT a.wild.example.test:443", "egress_unresolvable"],
    ["a request that is not a proxy request", "GET /relative", "egress_bad_request"],
  ])("refuses %s with its code and a refused decision", async (_what, line, code) => {
    const before = decisions.length;
    const answer = await send(`${line} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer.text).toContain(`X-PersonalClaw-Egress: ${code}`);
    expect(decisions.slice(before)).toEqual([expect.objectContaining({ outcome: "refused", code })]);
  });
});

describe("address policy", () => {
  it.each([
    ["93.184.216.34", false, true],
    ["127.0.0.1", false, false],
    ["127.0.0.2", true, true],
    ["10.1.2.3", false, false],
    ["192.168.1.1", true, true],
    ["100.64.0.1", false, false],
    ["169.254.169.254", true, false],
    ["::1", false, false],
    ["::ffff:127.0.0.1", false, false],
    ["fd00::1", false, false],
    ["fe80::1", true, false],
    ["224.0.0.1", true, false],
    ["0.0.0.0", true, false],
    ["2606:4700::1111", false, true],
  ])("%s (explicitly granted: %s) may be dialled: %s", (address, explicit, ok) => {
    expect(vetAddress(address, explicit).ok).toBe(ok);
  });

  it.each([
    ["::ffff:7f00:1", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["2606:4700:0:0:0:0:0:1111", "2606:4700::1111"],
    ["2606:4700::1111%eth0", "2606:4700::1111"],
    ["::ffff:93.184.216.34", "93.184.216.34"],
    ["api.example.test", null],
  ])("%s is the address %s in canonical form", (text, canonical) => {
    expect(canonicalAddress(text)).toBe(canonical);
  });
});
