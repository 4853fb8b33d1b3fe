// Runtime path start-up: the hello worker under each config, spawn to first 200, and its RSS;
// and a bare Node HTTP server's RSS, the floor under the bridge's own memory. The start section
// reads the same measurements as its baselines.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { rssKiB, stopChild } from "../lib/procs.mjs";
import {
  benchWorkers,
  buildHelloProductBundle,
  loopbackListen,
  minimalConfig,
  productConfig,
  startWorkerd,
} from "../lib/workerd.mjs";

/** Starts each hello config and a bare Node server once per run; answers their start times and RSS. */
export async function runtimeStartups(bench) {
  const { RUNS, scratch } = bench;
  const bundle = await buildHelloProductBundle(join(scratch, "hello-product-bundle.js"));
  const out = { product: { startMs: [], rssKiB: [] }, minimal: { startMs: [], rssKiB: [] }, node: { rssKiB: [] } };
  for (let r = 0; r < RUNS; r++) {
    const hm = await loopbackListen();
    const hmConfig = join(scratch, `hello-minimal-start-${r}.capnp`);
    const minimal = await startWorkerd({
      configPath: hmConfig,
      port: hm.port,
      experimental: false,
      configText: minimalConfig({
        configPath: hmConfig,
        listen: hm.listen,
        modules: [{ name: "hello.js", path: join(benchWorkers, "hello.js") }],
      }),
    });
    await new Promise((r2) => setTimeout(r2, 500));
    out.minimal.startMs.push(minimal.startMs);
    out.minimal.rssKiB.push(rssKiB(minimal.pid));
    await minimal.stop();

    const hp = await loopbackListen();
    const hpConfig = join(scratch, `hello-product-start-${r}.capnp`);
    const product = await startWorkerd({
      configPath: hpConfig,
      port: hp.port,
      configText: await productConfig({ scratch, configPath: hpConfig, workerBundle: bundle, listen: hp.listen }),
    });
    await new Promise((r2) => setTimeout(r2, 500));
    out.product.startMs.push(product.startMs);
    out.product.rssKiB.push(rssKiB(product.pid));
    await product.stop();

    out.node.rssKiB.push(await bareNodeRssKiB());
  }
  bench.raw.runtimeStartups = out;
  return out;
}

/** A bare Node HTTP server's RSS once it listens: the floor under the bridge's own memory. */
async function bareNodeRssKiB() {
  const node = spawn(
    process.execPath,
    ["-e", "require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', () => console.log('up'))"],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  await new Promise((resolvePromise) => node.stdout.once("data", resolvePromise));
  await new Promise((r2) => setTimeout(r2, 500));
  const rss = rssKiB(node.pid);
  await stopChild(node, 2_000);
  return rss;
}

/** The product's workerd config against a hand-written minimal one: start time and idle RSS. */
export function runtimeFigures(bench, runtime) {
  bench.figure(
    "runtime",
    "start -> first 200 (hello)",
    "ms",
    runtime.product.startMs,
    runtime.minimal.startMs,
    "hello, hand-written minimal config",
  );
  bench.figure(
    "runtime",
    "RSS idle (hello)",
    "MiB",
    runtime.product.rssKiB.map((x) => x / 1024),
    runtime.minimal.rssKiB.map((x) => x / 1024),
    "hello, hand-written minimal config",
  );
}
