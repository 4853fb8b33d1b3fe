// Tool calls through `mcp run` (issue 39): the round trip of one tools/call from the official
// MCP SDK client through the mediation — the gateway's verdict before the call, the confined
// server, the evidence after — against the same server spawned directly by the same client,
// unconfined, in the same run. Two floors sit between them, each a process relaying to the same
// server unconfined (lib/mcp-relay.mjs): one copying bytes (what any process in the middle costs)
// and the product's own mediator with a gate that allows everything (the SDK on both sides).
// p50 and p99 over 1000 sequential calls per run, and CPU per call of the whole path: the
// client (this process), every process between it and the server, the server, and, for
// `mcp run`, the gateway's workerd and bridge (the verdict, the stamp, the evidence).
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { installApp, startPersonalclaw, cliPath } from "../lib/gateway.mjs";
import { importProductModules } from "../lib/product-modules.mjs";
import { cpuMeter, descendants, msSince } from "../lib/procs.mjs";
import { repoRoot } from "../lib/workerd.mjs";

const FIXTURE = join(repoRoot, "test", "fixtures", "backend-apps", "mcp-tools");
const SERVER = join(FIXTURE, "tools-server.mjs");
const RELAY = join(repoRoot, "bench", "lib", "mcp-relay.mjs");
const CALLS = 1000;
const WARM_UP = 300;

/** The ways a call travels, the subject first; each baseline is the one below it in cost. */
const WAYS = {
  mediated: "tool call through mcp run (verdict, confined server, evidence)",
  mediator: "the mediator alone, allowing every tool, server unconfined",
  bytes: "a process copying bytes between client and server",
  direct: "the same server spawned directly by the client",
};

function percentile(values, p) {
  const xs = [...values].sort((a, b) => a - b);
  return xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
}

async function connected(command, args, cwd) {
  const transport = new StdioClientTransport({ command, args, cwd, env: { PATH: process.env.PATH }, stderr: "ignore" });
  const client = new Client({ name: "bench-agent", version: "1.0.0" });
  await client.connect(transport);
  await client.listTools();
  return { client, pid: transport.pid };
}

/** Milliseconds of each of `n` sequential calls of the fixture's read-only tool (allowed by default), and the CPU they took. */
async function roundTrips(way, n) {
  const cpu = cpuMeter([...new Set([process.pid, way.pid, ...descendants(way.pid), ...way.alsoPids])]);
  const out = [];
  for (let i = 0; i < n; i++) {
    const started = process.hrtime.bigint();
    await way.client.callTool({ name: "read_note", arguments: {} });
    out.push(msSince(started));
  }
  return { ms: out, cpuUsPerCall: cpu.ns() / n / 1000 };
}

export async function mcpSection(bench) {
  const { RUNS, scratch, log, figure, cleanups } = bench;
  const home = join(scratch, "mcp-home");
  const gateway = await startPersonalclaw(home);
  cleanups.push(() => gateway.stop());
  await installApp(gateway, FIXTURE);
  const { file: mediatorBundle } = await importProductModules("bench-mcp-mediator.mjs", [
    'export { mediate } from "./host-bridge/mcp/tool-mediator.ts";',
  ]);
  const ways = {
    mediated: {
      ...(await connected(process.execPath, [cliPath, "mcp", "run", "mcp-tools", "tools", "--home", home])),
      alsoPids: [gateway.bridgePid, gateway.workerdPid],
    },
    mediator: { ...(await connected(process.execPath, [RELAY, "mediator", mediatorBundle, SERVER])), alsoPids: [] },
    bytes: { ...(await connected(process.execPath, [RELAY, "bytes", SERVER])), alsoPids: [] },
    direct: { ...(await connected(process.execPath, [SERVER], FIXTURE)), alsoPids: [] },
  };
  cleanups.push(async () => {
    for (const way of Object.values(ways)) await way.client.close();
  });
  const names = Object.keys(WAYS);
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < RUNS; r++) {
    log(
      `run ${r + 1}/${RUNS}: ${CALLS} tool calls each through mcp run, the mediator alone, a byte relay and straight to the server`,
    );
    for (const name of r % 2 === 0 ? names : [...names].reverse()) {
      await roundTrips(ways[name], WARM_UP);
      runs[name].push(await roundTrips(ways[name], CALLS));
    }
  }
  bench.raw.mcpToolCalls = Object.fromEntries(
    names.map((name) => [
      name,
      runs[name].map((r) => ({
        n: r.ms.length,
        p50: percentile(r.ms, 50),
        p99: percentile(r.ms, 99),
        cpuUsPerCall: r.cpuUsPerCall,
      })),
    ]),
  );
  const figures = [
    ["p50", "ms", (r) => percentile(r.ms, 50)],
    ["p99", "ms", (r) => percentile(r.ms, 99)],
    ["CPU per call, whole path", "µs/call", (r) => r.cpuUsPerCall],
  ];
  for (const [label, unit, read] of figures) {
    // The subject against the direct call (the targets), then each floor against the next one down.
    const pairs = [
      ["mediated", "direct"],
      ["mediated", "mediator"],
      ["mediator", "bytes"],
      ["bytes", "direct"],
    ];
    for (const [subject, baseline] of pairs)
      figure(
        "mcp",
        `${WAYS[subject]}, ${label}`,
        unit,
        runs[subject].map(read),
        runs[baseline].map(read),
        WAYS[baseline],
      );
  }
}
