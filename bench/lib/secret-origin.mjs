// What the bench's secrets section drives: the product's egress broker (TypeScript, bundled for
// this run) with a placeholder secret, a local TLS origin whose certificate comes from a CA made
// for the run (the tests' own helper, given to the broker as egress.extra_ca_certs), each in its
// own child process, and the two clients being compared: a plain-HTTP request the broker
// originates TLS for, and the app doing TLS itself through a CONNECT tunnel.
import { spawn } from "node:child_process";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import tls from "node:tls";
import { importProductModules } from "./product-modules.mjs";
import { stopChild } from "./procs.mjs";
import { repoRoot } from "./workerd.mjs";

/** Bundles what the section needs of the product and of the tests' CA helper; answers the bundle's path and module. */
export async function loadEgressBundle() {
  const { file, module } = await importProductModules("bench-egress.mjs", [
    'export { startBroker } from "./host-bridge/egress/broker.ts";',
    'export { loadOriginTrust } from "./host-bridge/egress/origin-tls.ts";',
    'export { newPlaceholder } from "./host-bridge/egress/secret-placeholders.ts";',
    'export { parseSecretOrigin } from "./kernel/contracts/secret-delivery.ts";',
    'export { parseHostPattern } from "./kernel/rules/network-grant.ts";',
    'export { makeTestCertificates } from "./test/helpers/test-ca.ts";',
  ]);
  return { bundle: file, egress: module };
}

/** Starts a role of secret-origin-child.mjs and answers its ready line with the child. */
export async function startChild(bench, role, config) {
  const child = spawn(
    process.execPath,
    [join(repoRoot, "bench", "lib", "secret-origin-child.mjs"), role, JSON.stringify(config)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  bench.cleanups.push(() => stopChild(child));
  const line = await new Promise((resolvePromise, reject) => {
    createInterface({ input: child.stdout }).once("line", resolvePromise);
    child.once("exit", (code) => reject(new Error(`the ${role} child exited ${code} before it was ready`)));
  });
  return { child, ready: JSON.parse(line) };
}

/** One GET through the broker's socket in absolute form, the placeholder in its header; a fresh connection each time. */
export function originatedRequest(socketPath, url, placeholder) {
  return new Promise((resolvePromise, reject) => {
    const req = http.request(
      { socketPath, path: url, headers: { authorization: `Bearer ${placeholder}` }, agent: false },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200 ? resolvePromise() : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** A CONNECT tunnel through the broker's socket to host:port, then TLS over it verified against `ca`. */
function tunnelTls(socketPath, host, port, ca, callback) {
  const socket = net.connect(socketPath);
  let head = "";
  const onData = (chunk) => {
    head += chunk.toString("latin1");
    if (!head.includes("\r\n\r\n")) return;
    socket.off("data", onData);
    if (!head.startsWith("HTTP/1.1 200")) return callback(new Error(head.split("\r\n")[0]));
    const secured = tls.connect({ socket, host, ca, ALPNProtocols: ["http/1.1"] });
    secured.setNoDelay(true);
    secured.once("secureConnect", () => callback(null, secured));
    secured.once("error", callback);
  };
  socket.on("data", onData);
  socket.once("error", callback);
  socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
}

/** An agent whose connections are CONNECT tunnels with the app's own TLS; keepAlive reuses them. */
export function tunnellingAgent(socketPath, host, port, ca, keepAlive) {
  const agent = new https.Agent({ keepAlive, maxSockets: 64 });
  agent.createConnection = (_options, callback) => {
    tunnelTls(socketPath, host, port, ca, callback);
    return undefined;
  };
  return agent;
}

/** One GET with the app's own TLS through a CONNECT tunnel (`agent` decides whether the tunnel is reused). */
export function tunnelledRequest(agent, host, port) {
  return new Promise((resolvePromise, reject) => {
    const req = https.request(
      { host, port, path: "/", agent, headers: { authorization: "Bearer held-by-app" } },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200 ? resolvePromise() : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}
