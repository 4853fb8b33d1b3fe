// Where `apps preview` spends its time on the generated 10 000-file / 100 MiB bundle: the
// product's own stageBundle, scanStaged and canonicalListing (compiled from source with
// esbuild), each timed in one process, beside the bare walk + read + sha256 of the same tree.
//
//   node bench/profile-install.mjs [--runs 3]
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { generateBundle } from "./lib/bundle.mjs";
import { summarize } from "./lib/stats.mjs";
import { msSince } from "./lib/procs.mjs";
import { repoRoot } from "./lib/workerd.mjs";

const { values: argv } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
const RUNS = Math.max(3, Math.min(10, Number(argv.runs) || 3));
const scratch = mkdtempSync(join(tmpdir(), "personalclaw-profile-install-"));

async function walkReadHash(dir) {
  const stack = [dir];
  let files = 0;
  while (stack.length > 0) {
    const current = stack.pop();
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const abs = join(current, entry.name);
      if (entry.isDirectory()) stack.push(abs);
      else if (entry.isFile()) {
        createHash("sha256").update(await readFile(abs)).digest();
        files++;
      }
    }
  }
  return files;
}

try {
  const entry = join(scratch, "entry.ts");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(
    entry,
    [
      `export { stageBundle } from ${JSON.stringify(join(repoRoot, "host-bridge/staging/stage-bundle.ts"))};`,
      `export { scanStaged } from ${JSON.stringify(join(repoRoot, "host-bridge/scan/scan-staged.ts"))};`,
      `export { canonicalListing } from ${JSON.stringify(join(repoRoot, "host-bridge/digest/canonical-listing.ts"))};`,
    ].join("\n"),
  );
  const outfile = join(scratch, "install-parts.mjs");
  await build({ entryPoints: [entry], outfile, bundle: true, format: "esm", platform: "node", target: "node20", logLevel: "warning" });
  const { stageBundle, scanStaged, canonicalListing } = await import(pathToFileURL(outfile).href);
  const bundle = join(scratch, "bundle-10k");
  generateBundle(bundle, { template: join(repoRoot, "apps", "fixtures", "node-notes"), name: "bench-bundle", files: 10_000, bytes: 100 * 1024 * 1024 });
  const manifest = JSON.parse(readFileSync(join(bundle, "app.json"), "utf8"));
  await walkReadHash(bundle);
  const t = { baseline: [], stage: [], scan: [], listing: [] };
  for (let r = 0; r < RUNS; r++) {
    let started = process.hrtime.bigint();
    await walkReadHash(bundle);
    t.baseline.push(msSince(started));
    const quarantine = mkdtempSync(join(scratch, "q-"));
    started = process.hrtime.bigint();
    const staged = await stageBundle(bundle, quarantine);
    t.stage.push(msSince(started));
    if (!staged.ok) throw new Error(`stage refused: ${staged.message}`);
    started = process.hrtime.bigint();
    await scanStaged(staged.dir, staged.entries, manifest);
    t.scan.push(msSince(started));
    started = process.hrtime.bigint();
    await canonicalListing(staged.dir);
    t.listing.push(msSince(started));
    rmSync(quarantine, { recursive: true, force: true });
  }
  const f = (xs) => {
    const s = summarize(xs);
    return `${Math.round(s.median)} [${Math.round(s.min)}–${Math.round(s.max)}]`;
  };
  process.stdout.write(`apps preview phases, 10 000 files / 100 MiB, medians of ${RUNS} runs [min–max], ms\n\n| phase | ms | × baseline |\n|---|---|---|\n`);
  const base = summarize(t.baseline).median;
  for (const [name, xs] of [
    ["stage (survey + copy into quarantine)", t.stage],
    ["scan (read every file, rules, runtime reach)", t.scan],
    ["canonical listing (the digest's hashes)", t.listing],
    ["baseline: walk + read + sha256", t.baseline],
  ]) {
    process.stdout.write(`| ${name} | ${f(xs)} | ${(summarize(xs).median / base).toFixed(2)}× |\n`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
