// Install: `apps preview` of a 10 000-file / 100 MiB bundle against walk + read + sha256, and
// the same command on the 4-file fixture against a bare Node start (the CLI's fixed cost).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { cpuMeter, msSince } from "../lib/procs.mjs";
import { repoRoot } from "../lib/workerd.mjs";
import { runCli } from "../lib/gateway.mjs";
import { generateBundle } from "../lib/bundle.mjs";

/** The baseline: every file of `dir` read and hashed in sorted order, in this process. */
async function walkReadHash(dir) {
  const stack = [dir];
  const hash = createHash("sha256");
  let files = 0;
  let bytes = 0;
  while (stack.length > 0) {
    const current = stack.pop();
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const abs = join(current, entry.name);
      if (entry.isDirectory()) stack.push(abs);
      else if (entry.isFile()) {
        const data = await readFile(abs);
        hash.update(createHash("sha256").update(data).digest());
        files++;
        bytes += data.length;
      }
    }
  }
  return { files, bytes, digest: hash.digest("hex") };
}

/** Generates the bundle, then times `apps preview` and the baselines once per run. */
export async function installSection(bench) {
  const { RUNS, scratch, log, figure } = bench;
  const bundle = join(scratch, "bundle-10k");
  log("generating the 10 000-file / 100 MiB bundle");
  const generated = generateBundle(bundle, {
    template: join(repoRoot, "apps", "fixtures", "node-notes"),
    name: "bench-bundle",
    files: 10_000,
    bytes: 100 * 1024 * 1024,
  });
  const home = join(scratch, "preview-home");
  mkdirSync(home);
  const preview = [];
  const baseline = [];
  // CPU of each side: this process and the children it reaped (the CLI and whatever it ran).
  const previewCpuMs = [];
  const baselineCpuMs = [];
  const fixture = [];
  const nodeStart = [];
  await walkReadHash(bundle); // the page cache holds the tree for both sides from here on
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: install preview`);
    const walk = async () => {
      const started = process.hrtime.bigint();
      const cpu = cpuMeter([process.pid]);
      const walked = await walkReadHash(bundle);
      baseline.push(msSince(started));
      baselineCpuMs.push(cpu.ns() / 1e6);
      return walked;
    };
    const previewOnce = async () => {
      const cpu = cpuMeter([process.pid]);
      const answer = await runCli(["apps", "preview", bundle, "--json", "--home", home], 180_000);
      previewCpuMs.push(cpu.ns() / 1e6);
      return answer;
    };
    // The order flips every other run (AB BA), so drift lands on both sides alike.
    let walked;
    let answer;
    if (r % 2 === 0) {
      walked = await walk();
      answer = await previewOnce();
    } else {
      answer = await previewOnce();
      walked = await walk();
    }
    if (answer.code !== 0)
      throw new Error(
        `apps preview failed (${answer.code}): ${answer.stdout.slice(0, 400)} ${answer.stderr.slice(0, 400)}`,
      );
    preview.push(answer.ms);
    if (walked.files < generated.files) throw new Error("the baseline walk missed files");
    // The same command on the 4-file fixture: the CLI's fixed cost (Node start, build check).
    const small = await runCli([
      "apps",
      "preview",
      join(repoRoot, "apps", "fixtures", "node-notes"),
      "--json",
      "--home",
      home,
    ]);
    fixture.push(small.ms);
    const bare = process.hrtime.bigint();
    execFileSync(process.execPath, ["-e", "0"]);
    nodeStart.push(msSince(bare));
  }
  bench.raw.install = {
    generated,
    previewMs: preview,
    baselineMs: baseline,
    previewCpuMs,
    baselineCpuMs,
    fixturePreviewMs: fixture,
    nodeStartMs: nodeStart,
  };
  figure("install", "apps preview, 10 000 files / 100 MiB", "ms", preview, baseline, "walk + read + sha256 in-process");
  figure(
    "install",
    "apps preview, 10 000 files / 100 MiB, CPU (the CLI and what it ran)",
    "ms CPU",
    previewCpuMs,
    baselineCpuMs,
    "walk + read + sha256 in-process",
  );
  figure(
    "install",
    "apps preview, node-notes (4 files): CLI fixed cost",
    "ms",
    fixture,
    nodeStart,
    "node -e 0 (process start)",
  );
}
