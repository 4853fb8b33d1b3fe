// The broker never dials this machine itself. A granted name that resolves to one of the host's
// own interface addresses (a VPS's public IPv4, an IPv6 SLAAC address) would reach every
// service bound to 0.0.0.0 or ::, though the address is public by its range. Proved with real
// interfaces: this machine's own, and public-range addresses put on a real (veth) interface in
// a network namespace of its own, where a listener on 0.0.0.0/:: stands for the local services.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseHostPattern, type HostPattern } from "../../kernel/rules/network-grant";
import { canonicalAddress, ownAddresses } from "./address-policy";
import { startBroker, type EgressDecision } from "./broker";

/** Sends one raw request through a broker socket; answers what came back until it closed. */
function sendThrough(socketPath: string, head: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("close", () => resolve(text));
    socket.on("error", () => resolve(text));
    socket.write(head);
    setTimeout(() => socket.end(), 1500);
  });
}

function patterns(...texts: string[]): HostPattern[] {
  return texts.map((t) => parseHostPattern(t) as HostPattern);
}

describe("this machine's own addresses", () => {
  let dir: string;
  let listener: net.Server;
  let port: number;
  let accepted = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pc-egress-own-"));
    // What a local service bound to every address looks like: :: takes IPv4 too.
    listener = net.createServer((socket) => {
      accepted += 1;
      socket.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, "::", r));
    port = (listener.address() as net.AddressInfo).port;
  });

  afterAll(() => {
    listener.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists every address of every interface, canonical", () => {
    const listed = Object.values(os.networkInterfaces())
      .flat()
      .map((entry) => canonicalAddress(entry!.address));
    expect(listed.length).toBeGreaterThan(0);
    for (const address of listed) expect(ownAddresses().has(address!)).toBe(true);
  });

  // Where this machine's addresses are all loopback, private or reserved (a test container),
  // their ranges refuse them already; on a VPS or a LAN host this is the public one. The
  // namespace below gives every machine a public-range address of its own.
  it("refuses a granted name resolving to any address of this machine's interfaces, and nothing reaches a listener there", async () => {
    const addresses = [...ownAddresses()];
    const decisions: EgressDecision[] = [];
    const broker = await startBroker({
      app: "own-test",
      grant: patterns(...addresses.map((_, i) => `own-${i}.example.test:${port}`)),
      socketPath: path.join(dir, "own.sock"),
      onDecision: (d) => decisions.push(d),
      resolve: async (host) => [addresses[Number(/^own-(\d+)\./.exec(host)![1])]!],
    });
    try {
      for (const [i, address] of addresses.entries()) {
        const answer = await sendThrough(broker.socketPath, `CONNECT own-${i}.example.test:${port} HTTP/1.1\r\n\r\n`);
        expect(answer, address).toContain("X-PersonalClaw-Egress: egress_address_refused");
      }
      expect(decisions.map((d) => d.code)).toEqual(addresses.map(() => "egress_address_refused"));
      expect(accepted).toBe(0);
    } finally {
      await broker.close();
    }
  });
});

// ---- public-range addresses of this machine, in a network namespace of their own ----------

/** The broker run inside the namespace: it adds the addresses, then reports what it answered. */
const NAMESPACE_PROGRAM = `
import { execFileSync } from "node:child_process";
import net from "node:net";
import { startBroker } from "./broker";

const [socketPath] = process.argv.slice(2);
const ip = (...args) => execFileSync("ip", args, { stdio: "ignore" });
ip("link", "set", "lo", "up");
ip("link", "add", "pcown0", "type", "veth", "peer", "name", "pcown1");
ip("link", "set", "pcown0", "up");
ip("link", "set", "pcown1", "up");
ip("addr", "add", "93.184.216.34/32", "dev", "pcown0");
ip("-6", "addr", "add", "2606:4700:90::7/128", "dev", "pcown0", "nodad");

let accepted = 0;
const listener = net.createServer((socket) => { accepted += 1; socket.end(); });
await new Promise((r) => listener.listen(0, "::", r));
const port = listener.address().port;

const names = {
  "own4.example.test": ["93.184.216.34"],
  "own6.example.test": ["2606:4700:90::7"],
  "mapped.example.test": ["::ffff:93.184.216.34"],
  "mapped-hex.example.test": ["::ffff:5db8:d822"],
  "later.example.test": ["185.199.108.7"],
};
const decisions = [];
const broker = await startBroker({
  app: "own-ns",
  grant: [
    ...Object.keys(names).map((host) => ({ kind: "exact", host, port })),
    { kind: "ip", host: "93.184.216.34", port },
  ],
  socketPath,
  onDecision: (d) => decisions.push(d),
  resolve: async (host) => names[host],
  connectTimeoutMs: 1000,
});
const send = (target) =>
  new Promise((resolve) => {
    const socket = net.connect(socketPath);
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("close", () => resolve(text));
    socket.on("error", () => resolve(text));
    socket.write("CONNECT " + target + " HTTP/1.1\\r\\n\\r\\n");
    setTimeout(() => socket.end(), 300);
  });
const codeOf = (text) => (/X-PersonalClaw-Egress: (\\S+)/.exec(text) || [null, text.split("\\r\\n")[0]])[1];

const out = { byName: {}, acceptedByName: 0 };
for (const name of ["own4", "own6", "mapped", "mapped-hex"])
  out.byName[name] = codeOf(await send(name + ".example.test:" + port));
out.acceptedByName = accepted;
// Before the address is the machine's, the name is dialled (nothing routes it here: it fails).
out.laterBefore = codeOf(await send("later.example.test:" + port));
ip("addr", "add", "185.199.108.7/32", "dev", "pcown0");
await new Promise((r) => setTimeout(r, 1100));
out.laterAfter = codeOf(await send("later.example.test:" + port));
out.acceptedAfterLater = accepted;
// The grant's own literal stays the one explicit way in.
out.literal = codeOf(await send("93.184.216.34:" + port));
out.acceptedAfterLiteral = accepted;
out.decisions = decisions;
await broker.close();
listener.close();
process.stdout.write(JSON.stringify(out));
`;

function run(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const canMakeNamespaces = process.getuid?.() === 0;

describe.skipIf(!canMakeNamespaces)("public-range addresses on this machine's interfaces (a network namespace)", () => {
  let dir: string;
  let result: Record<string, any>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pc-egress-ns-"));
    const program = path.join(dir, "broker-in-namespace.mjs");
    await build({
      stdin: { contents: NAMESPACE_PROGRAM, resolveDir: path.dirname(fileURLToPath(import.meta.url)), loader: "ts" },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: program,
      logLevel: "silent",
    });
    const ran = await run("unshare", ["--net", process.execPath, program, path.join(dir, "ns.sock")]);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    result = JSON.parse(ran.stdout);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a granted name resolving to the machine's public IPv4 or IPv6 address, in every form, and nothing connects", () => {
    expect(result.byName).toEqual({
      own4: "egress_address_refused",
      own6: "egress_address_refused",
      mapped: "egress_address_refused",
      "mapped-hex": "egress_address_refused",
    });
    expect(result.acceptedByName).toBe(0);
    const refused = result.decisions.filter((d: EgressDecision) => d.code === "egress_address_refused");
    expect(refused[0]).toMatchObject({ outcome: "refused", address: "93.184.216.34" });
    expect(refused[0].reason).toContain("93.184.216.34 is an address of this machine");
  });

  it("re-reads the interfaces: an address the machine gains is refused from then on", () => {
    expect(result.laterBefore).toBe("egress_connect_failed");
    expect(result.laterAfter).toBe("egress_address_refused");
    expect(result.acceptedAfterLater).toBe(0);
  });

  it("still dials the machine's own address where the grant names it as a literal", () => {
    expect(result.literal).toBe("HTTP/1.1 200 Connection Established");
    expect(result.acceptedAfterLiteral).toBe(1);
  });
});
