// The floors under `mcp run`'s cost, each a process between the bench's client and the same
// server, spawned unconfined:
//   node mcp-relay.mjs bytes <server.mjs>              copies bytes both ways (any relay's floor)
//   node mcp-relay.mjs mediator <bundle> <server.mjs>  the product's mediator (the SDK on both
//       sides, the call path of tool-calls.ts) with a gate that allows every tool and asks
//       nothing: what `mcp run` costs before the gateway's verdict, the sandbox and the evidence.
import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";

const [mode, ...rest] = process.argv.slice(2);
const serverPath = rest.at(-1);
const server = spawn(process.execPath, [serverPath], {
  cwd: dirname(serverPath),
  stdio: ["pipe", "pipe", "ignore"],
});
server.on("exit", (code) => process.exit(code ?? 0));
process.stdin.on("end", () => server.stdin.end());

if (mode === "bytes") {
  process.stdin.pipe(server.stdin);
  server.stdout.pipe(process.stdout);
} else if (mode === "mediator") {
  const { mediate } = await import(pathToFileURL(rest[0]).href);
  const gate = {
    report: async (tools) => tools.map((t) => ({ name: t.name, state: "pinned", pinned: t })),
    decide: async () => ({ decision: "allow", outcome: "allowed" }),
    awaitAnswer: async () => "approved",
    record: () => {},
  };
  const mediation = mediate({
    app: "bench",
    server: "tools",
    version: "1.0.0",
    agent: { stdin: process.stdin, stdout: process.stdout },
    child: { stdout: server.stdout, stdin: server.stdin },
    gate,
    bounds: { callTimeoutMs: 60_000, askTimeoutMs: 60_000, maxAnswerBytes: 1 << 20 },
    firstAnswerMs: 30_000,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await mediation.ready;
} else {
  process.stderr.write(`mcp-relay: unknown mode ${mode}\n`);
  process.exit(2);
}
