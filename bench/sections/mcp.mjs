// Tool calls through `mcp run` (issue 39): the round trip of one tools/call from the official
// MCP SDK client through the mediation — the gateway's verdict before the call, the confined
// server, the evidence after — against the same server spawned directly by the same client,
// unconfined, in the same run. p50 and p99 over 1000 sequential calls per run.
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { installApp, startPersonalclaw, cliPath } from "../lib/gateway.mjs";
import { msSince } from "../lib/procs.mjs";
import { repoRoot } from "../lib/workerd.mjs";

const FIXTURE = join(repoRoot, "test", "fixtures", "backend-apps", "mcp-tools");
const CALLS = 1000;
const WARM_UP = 50;

function percentile(values, p) {
  const xs = [...values].sort((a, b) => a - b);
  return xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
}

async function connected(command, args, cwd) {
  const client = new Client({ name: "bench-agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command, args, cwd, env: { PATH: process.env.PATH }, stderr: "ignore" }),
  );
  await client.listTools();
  return client;
}

/** Milliseconds of each of `n` sequential calls of the fixture's read-only tool (allowed by default). */
async function roundTrips(client, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const started = process.hrtime.bigint();
    await client.callTool({ name: "read_note", arguments: {} });
    out.push(msSince(started));
  }
  return out;
}

export async function mcpSection(bench) {
  const { RUNS, scratch, log, figure, cleanups } = bench;
  const home = join(scratch, "mcp-home");
  const gateway = await startPersonalclaw(home);
  cleanups.push(() => gateway.stop());
  await installApp(gateway, FIXTURE);
  const mediated = await connected(process.execPath, [cliPath, "mcp", "run", "mcp-tools", "tools", "--home", home]);
  const direct = await connected(process.execPath, ["tools-server.mjs"], FIXTURE);
  cleanups.push(async () => {
    await mediated.close();
    await direct.close();
  });
  const runs = { mediated: [], direct: [] };
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: ${CALLS} tool calls through mcp run and straight to the server`);
    const order = r % 2 === 0 ? ["mediated", "direct"] : ["direct", "mediated"];
    for (const way of order) {
      const client = way === "mediated" ? mediated : direct;
      await roundTrips(client, WARM_UP);
      runs[way].push(await roundTrips(client, CALLS));
    }
  }
  bench.raw.mcpToolCalls = Object.fromEntries(
    Object.entries(runs).map(([way, lists]) => [
      way,
      lists.map((l) => ({ n: l.length, p50: percentile(l, 50), p99: percentile(l, 99) })),
    ]),
  );
  for (const p of [50, 99]) {
    const of = (way) => runs[way].map((l) => percentile(l, p));
    figure(
      "mcp",
      `tool call through mcp run (verdict, confined server, evidence), p${p}`,
      "ms",
      of("mediated"),
      of("direct"),
      "the same server spawned directly by the client",
    );
  }
}
