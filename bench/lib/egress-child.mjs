// A child process of the bench's broker and secrets sections, in one of five roles, so each
// process's CPU is its own and the client being timed shares its event loop with neither side:
//   upstream '{"key","cert","host"}'   a TLS origin answering every request with 2 bytes
//   plain-upstream '{"host"}'          the same over plain HTTP
//   broker '{"bundle","socketPath","grant","origin","caPath","placeholder","value"}'
//                                      the product's egress broker with one placeholder secret
//   bare-proxy '{"socketPath"}'      the floor of any proxy in Node: absolute-form requests
//                                      forwarded and CONNECT tunnelled with no check at all
//   client '{"socketPath","bareSocketPath","host","plainPort","tlsPort","caPem","placeholder"}'
//                                      makes the requests: each line on stdin {"way","connections","seconds"}
//                                      warms up, prints {"phase":"measuring"}, measures, prints the result
// Each prints one JSON line on stdout once it is ready, and runs until it is sent SIGTERM.
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { WAYS } from "./egress-clients.mjs";

const [role, configText] = process.argv.slice(2);
const config = JSON.parse(configText);
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const answerOk = (_req, res) => {
  res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
  res.end("ok");
};

/** Latencies (ms) of requests made by `connections` loops, each one request at a time, for `seconds`. */
async function latencies(connections, seconds, request) {
  const out = [];
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const started = process.hrtime.bigint();
        await request();
        out.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }),
  );
  return out;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? null;

/** Runs one measurement command: warm-up (not counted), then the timed requests and this process's CPU over them. */
async function measure({ way, connections, seconds }) {
  const made = WAYS[way]({ ...config, ca: config.caPem });
  await latencies(connections, Math.min(0.3, seconds), made.request);
  say({ phase: "measuring" });
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const list = (await latencies(connections, seconds, made.request)).sort((a, b) => a - b);
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  const used = process.cpuUsage(cpu);
  made.close();
  say({
    way,
    n: list.length,
    p50: percentile(list, 50),
    p99: percentile(list, 99),
    elapsedMs,
    cpuNs: (used.user + used.system) * 1000,
  });
}

if (role === "upstream") {
  const server = https.createServer({ key: config.key, cert: config.cert, noDelay: true }, answerOk);
  server.listen(0, config.host, () => say({ port: server.address().port }));
  process.on("SIGTERM", () => process.exit(0));
} else if (role === "plain-upstream") {
  const server = http.createServer({ noDelay: true }, answerOk);
  server.listen(0, config.host, () => say({ port: server.address().port }));
  process.on("SIGTERM", () => process.exit(0));
} else if (role === "broker") {
  const egress = await import(pathToFileURL(config.bundle).href);
  const origins = [egress.parseSecretOrigin(config.origin)];
  const broker = await egress.startBroker({
    app: "bench",
    grant: config.grant.map((text) => egress.parseHostPattern(text)),
    socketPath: config.socketPath,
    onDecision: () => {},
    trust: egress.loadOriginTrust({ extraCaFile: config.caPath }),
    secrets: [
      {
        name: "BENCH_KEY",
        use: { origins: [config.origin], header: "Authorization", format: "Bearer {value}" },
        origins: () => origins,
        read: () => config.value,
        placeholder: config.placeholder,
      },
    ],
  });
  say({ socketPath: broker.socketPath });
  process.on("SIGTERM", () => broker.close().then(() => process.exit(0)));
} else if (role === "bare-proxy") {
  const server = http.createServer({ noDelay: true });
  server.on("request", (req, res) => {
    const url = new URL(req.url);
    const forwarded = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: req.method,
        headers: req.headers,
        agent: false,
      },
      (reply) => {
        res.writeHead(reply.statusCode, reply.headers);
        reply.pipe(res);
      },
    );
    forwarded.on("socket", (socket) => socket.setNoDelay(true));
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });
  server.on("connect", (req, client, head) => {
    const [host, port] = req.url.split(":");
    const upstream = net.connect({ host, port: Number(port), noDelay: true }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.once("close", () => upstream.destroy());
  });
  server.listen(config.socketPath, () => say({ socketPath: config.socketPath }));
  process.on("SIGTERM", () => process.exit(0));
} else if (role === "client") {
  let queue = Promise.resolve();
  createInterface({ input: process.stdin }).on("line", (line) => {
    queue = queue
      .then(() => measure(JSON.parse(line)))
      .catch((error) => say({ error: String(error?.message ?? error) }));
  });
  say({ ready: true });
  process.on("SIGTERM", () => process.exit(0));
} else {
  process.stderr.write(`unknown role ${role}\n`);
  process.exit(2);
}
