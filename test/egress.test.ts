// The network permission end to end: the real `personalclaw start`, a real install, real
// bubblewrap with the app in its own network namespace, and a local server on another loopback
// address (127.0.0.2) standing in for "the internet". The app's grant names 127.0.0.2 (an
// explicit address grant, so a local address is allowed for it) and `localhost` (a name that
// resolves to loopback, which a name grant never opens).
import http from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendStatus } from "../kernel/contracts/app-record";
import { repoRoot, startGateway, type RunningGateway } from "./helpers/gateway";
import { getFromBackend, install, waitForRow } from "./helpers/backends";

interface LoggedEvent {
  kind: string;
  subject: string;
  principal: string;
  outcome: string;
}

describe("egress through a running gateway", () => {
  let root: string;
  let home: string;
  let gw: RunningGateway;
  let upstream: http.Server;
  let upstreamPort: number;
  let upstreamHits = 0;
  let row: BackendStatus;

  const probe = async (path: string) =>
    JSON.parse((await getFromBackend(home, row, path)).body) as Record<string, unknown>;
  const events = async (kind: string) =>
    ((await (await gw.fetch(`/api/security/events?kind=${kind}`)).json()) as { events: LoggedEvent[] }).events;
  /** The bridge writes a decision's row as it makes it, not before it answers the app: poll briefly. */
  const eventually = async (kind: string, match: (e: LoggedEvent) => boolean) => {
    for (let i = 0; i < 50; i += 1) {
      if ((await events(kind)).some(match)) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      upstreamHits += 1;
      res.end(`the internet says hi to ${req.url}`);
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.2", r));
    upstreamPort = (upstream.address() as AddressInfo).port;
    root = mkdtempSync("/var/tmp/pc-egress-");
    home = join(root, "home");
    mkdirSync(home);
    gw = await startGateway({ home });
    await install(home, join(repoRoot, "test", "fixtures", "backend-apps", "egress-probe"));
    row = (await waitForRow(gw, "egress-probe", (r) => r.healthy))!;
    expect(row.healthy).toBe(true);
  });

  afterAll(async () => {
    await gw?.stop();
    upstream.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("a declared host answers through the broker, with node's http module and with fetch, and each is an allowed row", async () => {
    for (const via of ["http", "fetch"]) {
      const answer = await probe(
        `/out?via=${via}&url=${encodeURIComponent(`http://127.0.0.2:${upstreamPort}/hello-${via}`)}`,
      );
      expect(answer, via).toMatchObject({ status: 200, body: `the internet says hi to /hello-${via}` });
    }
    expect(
      await eventually(
        "egress_allowed",
        (e) =>
          e.principal === "app:egress-probe" && e.subject === `127.0.0.2:${upstreamPort}` && e.outcome === "allowed",
      ),
    ).toBe(true);
  });

  it("an undeclared host, a granted name resolving to loopback and the metadata address are refused by the broker, each a row", async () => {
    const before = upstreamHits;
    // `localhost` goes by hand: ordinary clients never send it to the proxy (NO_PROXY), they reach the app's own loopback.
    const cases = [
      [
        `/out?via=http&url=${encodeURIComponent(`http://127.0.0.3:${upstreamPort}/`)}`,
        "egress_not_declared",
        `127.0.0.3:${upstreamPort}`,
      ],
      [`/connect?host=localhost&port=${upstreamPort}`, "egress_address_refused", `localhost:${upstreamPort}`],
      [
        `/out?via=fetch&url=${encodeURIComponent("http://169.254.169.254/latest/meta-data/")}`,
        "egress_not_declared",
        "169.254.169.254:80",
      ],
    ] as const;
    for (const [url, code, subject] of cases) {
      const answer = await probe(url);
      expect(answer.status ?? answer.error, url).not.toBe(200);
      expect(JSON.stringify(answer), url).toContain(code);
      expect(
        await eventually(
          code,
          (e) => e.subject === subject && e.outcome === "refused" && e.principal === "app:egress-probe",
        ),
        `${code} row for ${subject}`,
      ).toBe(true);
    }
    expect(upstreamHits).toBe(before);
  });

  it("a direct connection that ignores the proxy and a UDP send go nowhere", async () => {
    const before = upstreamHits;
    // Its own namespace has a loopback of its own, with nothing of the host's on it.
    expect(await probe(`/direct?host=127.0.0.2&port=${upstreamPort}`)).toEqual({ result: "ECONNREFUSED" });
    expect(await probe("/direct?host=1.1.1.1&port=443")).toEqual({ result: "ENETUNREACH" });
    expect(await probe("/udp?host=1.1.1.1&port=53")).toEqual({ result: "ENETUNREACH" });
    expect(upstreamHits).toBe(before);
  });

  it("from inside the sandbox no host loopback port is reachable: not the bridge, not another server; the gateway only through its own socket", async () => {
    const { bridgePort } = JSON.parse(readFileSync(join(home, "gateway.json"), "utf8")) as { bridgePort: number };
    expect(bridgePort).toBeGreaterThan(0);
    for (const port of [bridgePort, upstreamPort]) {
      expect(await probe(`/direct?host=127.0.0.1&port=${port}`), `port ${port}`).toEqual({ result: "ECONNREFUSED" });
    }
    // 127.0.0.1:<gateway port> inside is the launcher's relay to the gateway's UNIX socket, not the host's listener.
    expect(await probe(`/direct?host=127.0.0.1&port=${gw.port}`)).toEqual({ result: "connected" });
    expect(await probe(`/direct?host=127.0.0.2&port=${gw.port}`)).toEqual({ result: "ECONNREFUSED" });
  });
});
