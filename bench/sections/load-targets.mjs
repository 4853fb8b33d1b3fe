// What the load sections (proxy, auth, tail, runtime) send load to: the product gateway with
// node-notes installed and, beside it, each section's baselines, every one a child on loopback
// stopped when the bench ends. Answers the targets in the order the first run visits them.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  backendSlotSocket,
  benchWorkers,
  buildHelloProductBundle,
  loopbackListen,
  minimalConfig,
  productConfig,
  repoRoot,
  startForwardDuties,
  startPassthrough,
  startWorkerd,
} from "../lib/workerd.mjs";
import { installApp, startPersonalclaw, waitHealthy } from "../lib/gateway.mjs";
import { nginxBinary, startNginx } from "../lib/nginx.mjs";

const NODE_NOTES = join(repoRoot, "apps", "fixtures", "node-notes");

/** Starts the gateway and every baseline the wanted sections compare it with; answers their targets. */
export async function startLoadTargets(bench) {
  const { scratch, cleanups, wants } = bench;
  const gatewayHome = join(scratch, "gateway-home");
  mkdirSync(gatewayHome);
  bench.log("starting the gateway and installing node-notes");
  const gateway = await startPersonalclaw(gatewayHome);
  cleanups.push(() => gateway.stop());
  await installApp(gateway, NODE_NOTES);
  const confinedRow = (await waitHealthy(gateway, ["node-notes"]))["node-notes"];
  const targets = wants("proxy") ? await proxyTargets(bench, gateway, gatewayHome, confinedRow) : [];
  if (wants("auth") || wants("tail"))
    targets.push({
      id: "gateway-status",
      pid: gateway.workerdPid,
      port: gateway.port,
      path: "/api/status",
      headers: gateway.owner,
    });
  if (wants("tail"))
    targets.push({
      id: "gateway-sessions",
      pid: gateway.workerdPid,
      port: gateway.port,
      path: "/api/auth/sessions",
      headers: gateway.owner,
    });
  if (wants("auth") || wants("runtime") || wants("tail")) targets.push(await startHelloProduct(bench));
  if (wants("runtime")) targets.push(await startHelloMinimal(bench));
  return targets;
}

/**
 * The proxy's subject and baselines. The same app on a gateway with sandbox.mode off: its
 * backend listens on a loopback TCP port, the transport every proxied request took before
 * backends had network namespaces of their own, and the port the direct, pass-through and
 * nginx baselines reach it on.
 */
async function proxyTargets(bench, gateway, gatewayHome, confinedRow) {
  const { scratch, cleanups } = bench;
  const tcpHome = join(scratch, "gateway-home-tcp");
  mkdirSync(tcpHome);
  writeFileSync(join(tcpHome, "config.json"), JSON.stringify({ sandbox: { mode: "off" } }));
  const tcpGateway = await startPersonalclaw(tcpHome);
  cleanups.push(() => tcpGateway.stop());
  await installApp(tcpGateway, NODE_NOTES);
  const rows = await waitHealthy(tcpGateway, ["node-notes"]);
  const backendPort = rows["node-notes"].backend.port;
  const sign = { secretFile: join(tcpHome, "apps", "node-notes", ".app_secret"), method: "GET", target: "/api/echo" };
  const targets = [
    {
      id: "gateway-proxy",
      pid: gateway.workerdPid,
      port: gateway.port,
      path: "/apps/node-notes/api/echo",
      headers: gateway.owner,
    },
    { id: "gateway-proxy-tcp", port: tcpGateway.port, path: "/apps/node-notes/api/echo", headers: tcpGateway.owner },
    { id: "backend-direct", port: backendPort, path: "/api/echo", sign },
  ];
  // The fair pass-through reaches the confined backend the way the gateway does: its slot's socket.
  const slotPassthrough = await startPassthrough(scratch, {
    socket: await backendSlotSocket(scratch, gatewayHome, confinedRow.backend.slot),
  });
  cleanups.push(() => slotPassthrough.stop());
  targets.push({
    id: "workerd-passthrough-slot",
    pid: slotPassthrough.pid,
    port: slotPassthrough.port,
    path: "/api/echo",
    sign: { ...sign, secretFile: join(gatewayHome, "apps", "node-notes", ".app_secret") },
  });
  // The floor of what the gateway owes each forward (signature, header rules, bounded wait,
  // inert answer), the product's own code in a bare worker on the same slot.
  const duties = await startForwardDuties(scratch, {
    socket: await backendSlotSocket(scratch, gatewayHome, confinedRow.backend.slot),
    secret: readFileSync(join(gatewayHome, "apps", "node-notes", ".app_secret"), "utf8").trim(),
  });
  cleanups.push(() => duties.stop());
  targets.push({ id: "forward-duties-slot", pid: duties.pid, port: duties.port, path: "/apps/node-notes/api/echo" });
  const passthrough = await startPassthrough(scratch, { port: backendPort });
  cleanups.push(() => passthrough.stop());
  targets.push({ id: "workerd-passthrough", port: passthrough.port, path: "/api/echo", sign });
  const nginx = nginxBinary();
  if (nginx) {
    const ng = await loopbackListen();
    const proxy = await startNginx({ binary: nginx, scratch, port: ng.port, backendPort });
    cleanups.push(() => proxy.stop());
    targets.push({ id: "nginx-proxy", port: ng.port, path: "/api/echo", sign });
  } else {
    bench.raw.nginxSkipped = "nginx is not installed: the nginx baseline row is skipped";
    bench.log(bench.raw.nginxSkipped);
  }
  return targets;
}

/** The hello worker under the product's own workerd config: the runtime path without the gateway's work. */
async function startHelloProduct(bench) {
  const { scratch } = bench;
  const hp = await loopbackListen();
  const hpConfig = join(scratch, "hello-product.capnp");
  const bundle = await buildHelloProductBundle(join(scratch, "hello-product-bundle.js"));
  const helloProduct = await startWorkerd({
    configPath: hpConfig,
    port: hp.port,
    configText: await productConfig({ scratch, configPath: hpConfig, workerBundle: bundle, listen: hp.listen }),
  });
  bench.cleanups.push(() => helloProduct.stop());
  return { id: "hello-product-config", pid: helloProduct.pid, port: hp.port, path: "/" };
}

/** The hello worker under a hand-written minimal config. */
async function startHelloMinimal(bench) {
  const { scratch } = bench;
  const hm = await loopbackListen();
  const hmConfig = join(scratch, "hello-minimal.capnp");
  const helloMinimal = await startWorkerd({
    configPath: hmConfig,
    port: hm.port,
    experimental: false,
    configText: minimalConfig({
      configPath: hmConfig,
      listen: hm.listen,
      modules: [{ name: "hello.js", path: join(benchWorkers, "hello.js") }],
    }),
  });
  bench.cleanups.push(() => helloMinimal.stop());
  return { id: "hello-minimal-config", port: hm.port, path: "/" };
}
