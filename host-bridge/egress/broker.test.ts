// The egress broker over a real UNIX socket, with a local upstream on another loopback address
// standing in for "the internet": what passes, what is refused, and that each is a decision.
import http from "node:http";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseHostPattern, type HostPattern } from "../../workers/contracts/network-grant";
import { parseProxyHead, startBroker, type EgressBroker, type EgressDecision } from "./broker";
import { vetAddress } from "./address-policy";

let dir: string;
let upstream: http.Server;
let upstreamPort: number;
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
  return new Promise((resolve) => {
    const socket = net.connect(broker.socketPath);
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
  upstream = http.createServer((req, res) => res.end(`upstream saw ${req.method} ${req.url} host=${req.headers.host}`));
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.2", r));
  upstreamPort = (upstream.address() as net.AddressInfo).port;
  broker = await startBroker({
    app: "egress-test",
    grant: patterns(
      `127.0.0.2:${upstreamPort}`,
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

  it("parses only CONNECT host:port and absolute http:// heads", () => {
    expect(parseProxyHead("CONNECT [::1]:443 HTTP/1.1")).toEqual({ host: "::1", port: 443 });
    expect(parseProxyHead("CONNECT host HTTP/1.1")).toBeNull();
    expect(parseProxyHead("GET https://x/ HTTP/1.1")).toBeNull();
    expect(parseProxyHead("GET http://user:pw@x/ HTTP/1.1")).toBeNull();
  });
});
