// Add: `personalclaw apps add npm:@modelcontextprotocol/server-memory@2025.8.4` from a local
// npm stand-in serving the vendored closure (the tests' own, test/helpers/npm-registry.ts), the
// preview (resolve and pin the closure, generate the app, the review) and the install with --yes
// (the same again, then the confined install: npm ci of the pinned lockfile in the sandbox, the
// consent and the record), against `npm ci` of the same lockfile in a bare folder with a fresh
// cache, so every tarball is fetched from the same stand-in as the confined installer fetches it.
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpuMeter, msSince } from "../lib/procs.mjs";
import { runCli, startPersonalclaw } from "../lib/gateway.mjs";
import { importProductModules } from "../lib/product-modules.mjs";

const NAME = "@modelcontextprotocol/server-memory";
const VERSION = "2025.8.4";
const SPEC = `npm:${NAME}@${VERSION}`;
const ENV = ["--env", "MEMORY_FILE_PATH=${DATA}/memory.jsonl"];

/** `npm ci` of the lockfile in `dir`, its cache a fresh folder: every tarball fetched, no script run. */
function npmCi(dir) {
  const started = process.hrtime.bigint();
  return new Promise((resolvePromise, reject) => {
    execFile(
      "npm",
      ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--cache", join(dir, ".npm-cache"), "--prefer-online"],
      { cwd: dir, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, _stdout, stderr) =>
        error ? reject(new Error(`npm ci failed: ${stderr.slice(-400)}`)) : resolvePromise(msSince(started)),
    );
  });
}

/** Starts the stand-in and a gateway taking its packages from it, then times both sides once per run. */
export async function addSection(bench) {
  const { RUNS, scratch, log, figure, cleanups } = bench;
  // Two folders below the repository, as the stand-in's own module sits: it finds the fixtures from where it is.
  const { module } = await importProductModules("bench/bench-add.mjs", [
    'export { startNpmRegistry } from "./test/helpers/npm-registry.ts";',
    'export { resolveNpmClosure } from "./host-bridge/sources/npm-resolve.ts";',
    'export { closureLockfile, closurePackageJson } from "./host-bridge/sources/npm-lockfile.ts";',
  ]);
  const registry = await module.startNpmRegistry();
  cleanups.push(() => registry.close());
  const home = join(scratch, "add-home");
  mkdirSync(home);
  writeFileSync(join(home, "config.json"), JSON.stringify({ install: { npm_registry: registry.url } }));
  log("add: starting a gateway whose npm source is the local stand-in");
  const gateway = await startPersonalclaw(home);
  cleanups.push(() => gateway.stop());
  const { closure } = await module.resolveNpmClosure({ registry: registry.url, name: NAME, version: VERSION });
  const preview = [];
  const install = [];
  const baseline = [];
  // CPU of each side: this process and what it reaped (the CLI, npm), and the gateway's bridge
  // and workerd with what they reaped (the confined npm ci).
  const gatewayPids = [...new Set([process.pid, gateway.child.pid, gateway.bridgePid, gateway.workerdPid])];
  const cpuMs = { preview: [], install: [], baseline: [] };
  const metered = async (side, work) => {
    const cpu = cpuMeter(side === "baseline" ? [process.pid] : gatewayPids);
    const answer = await work();
    cpuMs[side].push(cpu.ns() / 1e6);
    return answer;
  };
  const addOnce = async () => {
    const shown = await metered("preview", () =>
      runCli(["apps", "add", SPEC, ...ENV, "--json", "--home", home], 180_000),
    );
    if (!shown.stdout.includes("consent_required"))
      throw new Error(`apps add preview did not ask consent (${shown.code}): ${shown.stdout.slice(0, 400)}`);
    preview.push(shown.ms);
    const added = await metered("install", () =>
      runCli(["apps", "add", SPEC, ...ENV, "--yes", "--json", "--home", home], 300_000),
    );
    if (added.code !== 0) throw new Error(`apps add --yes failed (${added.code}): ${added.stdout.slice(0, 400)}`);
    install.push(added.ms);
    const removed = await runCli(["apps", "uninstall", "server-memory", "--purge-data", "--home", home], 120_000);
    if (removed.code !== 0) throw new Error(`apps uninstall failed: ${removed.stderr.slice(0, 400)}`);
  };
  const npmCiOnce = async (r) => {
    const bare = join(scratch, `npm-ci-${r}`);
    mkdirSync(bare);
    writeFileSync(join(bare, "package.json"), module.closurePackageJson(closure));
    writeFileSync(join(bare, "package-lock.json"), module.closureLockfile(closure));
    baseline.push(await metered("baseline", () => npmCi(bare)));
    rmSync(bare, { recursive: true, force: true });
  };
  // The order flips every other run (AB BA), so drift lands on both sides alike.
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: apps add ${SPEC} (preview, then --yes) and npm ci of its lockfile`);
    if (r % 2 === 0) {
      await addOnce();
      await npmCiOnce(r);
    } else {
      await npmCiOnce(r);
      await addOnce();
    }
  }
  bench.raw.add = {
    packages: closure.packages.length,
    previewMs: preview,
    installMs: install,
    npmCiMs: baseline,
    cpuMs,
  };
  const packages = `${closure.packages.length} packages`;
  figure(
    "add",
    `apps add ${SPEC} preview (${packages})`,
    "ms",
    preview,
    baseline,
    "npm ci, same lockfile, bare folder",
  );
  figure("add", `apps add ${SPEC} --yes (${packages})`, "ms", install, baseline, "npm ci, same lockfile, bare folder");
  figure(
    "add",
    `apps add ${SPEC} --yes, CPU (CLI, bridge, workerd, confined npm)`,
    "ms CPU",
    cpuMs.install,
    cpuMs.baseline,
    "npm ci, same lockfile, bare folder",
  );
}
