// Where staging a bundle spends its time on the generated 10 000-file / 100 MiB bundle: the
// product's own stageBundle (install's copy), scanStaged and the listing the digest uses
// (compiled from source with esbuild), each timed in one process, beside the bare walk + read +
// sha256 of the same tree. Then each stage alone (the survey, the copy without the scan, the
// read without a copy that `apps preview` makes, the scan of every file from memory) next to its floor on this machine (sha256 of the bytes in memory, creating 10 000 empty
// files, `cp -r` of the tree), with the CPU time of the whole process beside the wall time.
// `--against DIR` profiles a second checkout (say `git archive` of an older commit) in the same
// process, alternating with this one run by run, so before and after share the machine's state.
//
//   node bench/profile-install.mjs [--runs 3] [--against DIR]
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { generateBundle } from "./lib/bundle.mjs";
import { summarize } from "./lib/stats.mjs";
import { msSince } from "./lib/procs.mjs";
import { repoRoot } from "./lib/workerd.mjs";

const { values: argv } = parseArgs({
  options: { runs: { type: "string", default: "3" }, against: { type: "string" } },
});
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
        createHash("sha256")
          .update(await readFile(abs))
          .digest();
        files++;
      }
    }
  }
  return files;
}

/** Compiles one checkout's stage, scan and listing into a module of its own. */
async function loadParts(root, label, key) {
  const entry = join(scratch, `entry-${key}.ts`);
  const listingModule = join(root, "host-bridge/digest/canonical-listing.ts");
  writeFileSync(
    entry,
    [
      `export * from ${JSON.stringify(join(root, "host-bridge/staging/stage-bundle.ts"))};`,
      `export { surveyTree } from ${JSON.stringify(join(root, "host-bridge/staging/survey-tree.ts"))};`,
      `export * as scan from ${JSON.stringify(join(root, "host-bridge/scan/scan-staged.ts"))};`,
      `export * as listing from ${JSON.stringify(listingModule)};`,
      ...(existsSync(join(root, "host-bridge/scan/scan-as-staged.ts"))
        ? [`export * as asStaged from ${JSON.stringify(join(root, "host-bridge/scan/scan-as-staged.ts"))};`]
        : []),
    ].join("\n"),
  );
  const outfile = join(scratch, `install-parts-${key}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
  });
  const parts = await import(pathToFileURL(outfile).href);
  // Staging and the scan as the preview runs them: where the checkout scans each file as staging
  // writes it, the stage phase includes that scan and the scan phase only what is left.
  const stageAndScan = parts.asStaged
    ? async (bundle, quarantine, manifest, times) => {
        const asStaged = parts.asStaged.scanAsStaged();
        let started = process.hrtime.bigint();
        const staged = await parts.stageBundle(bundle, quarantine, { onFileStaged: asStaged.onFileStaged });
        times.stage.push(msSince(started));
        if (!staged.ok) throw new Error(`stage refused: ${staged.message}`);
        started = process.hrtime.bigint();
        await parts.scan.scanStaged(staged.dir, staged.entries, manifest, { scanned: asStaged.scanned });
        times.scan.push(msSince(started));
        return staged;
      }
    : async (bundle, quarantine, manifest, times) => {
        let started = process.hrtime.bigint();
        const staged = await parts.stageBundle(bundle, quarantine);
        times.stage.push(msSince(started));
        if (!staged.ok) throw new Error(`stage refused: ${staged.message}`);
        started = process.hrtime.bigint();
        await parts.scan.scanStaged(staged.dir, staged.entries, manifest);
        times.scan.push(msSince(started));
        return staged;
      };
  // The listing as the preview makes it: from staging's own hashes where the checkout has that,
  // otherwise by reading the staged folder again (what older checkouts did).
  const previewListing = parts.listing.listingOfStaged
    ? async (staged) => parts.listing.listingOfStaged(staged.entries)
    : async (staged) => parts.listing.canonicalListing(staged.dir);
  // One file's scan from bytes in memory, where the checkout has one (older ones read it back).
  const scanOne = parts.scan.scanFileBytes
    ? (entry, bytes) => parts.scan.scanFileBytes(entry, bytes)
    : parts.scan.scanFileText
      ? (entry, bytes) => parts.scan.scanFileText(entry, bytes.toString("utf8"))
      : null;
  return {
    label,
    parts,
    scanOne,
    stageAndScan,
    previewListing,
    recomputeListing: (staged) => parts.listing.canonicalListing(staged.dir),
  };
}

/** Runs `fn` and answers its wall and whole-process CPU time (all threads, user + system), in ms. */
async function timed(fn) {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await fn();
  const used = process.cpuUsage(cpu);
  return { wall: msSince(started), cpu: (used.user + used.system) / 1000 };
}

/** Every regular file of the tree, read into memory once, as the scan is shown it. */
function filesInMemory(dir, rel = "") {
  const out = [];
  for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesInMemory(dir, path));
    else if (entry.isFile()) out.push({ entry: { path, mode: 0o644 }, bytes: readFileSync(join(dir, path)) });
  }
  return out;
}

/** Each stage alone, per checkout, beside the floors it cannot go under on this machine. */
async function stagesAlone(bundle, subjects) {
  const files = filesInMemory(bundle);
  const rows = new Map();
  const add = (name, t) => {
    if (!rows.has(name)) rows.set(name, { wall: [], cpu: [] });
    rows.get(name).wall.push(t.wall);
    rows.get(name).cpu.push(t.cpu);
  };
  const fresh = () => mkdtempSync(join(scratch, "q-"));
  for (let r = 0; r < RUNS; r++) {
    for (const subject of subjects.slice(r % subjects.length).concat(subjects.slice(0, r % subjects.length))) {
      add(`${subject.label}: survey`, await timed(() => subject.parts.surveyTree(bundle)));
      const quarantine = fresh();
      add(`${subject.label}: survey + copy, no scan`, await timed(() => subject.parts.stageBundle(bundle, quarantine)));
      rmSync(quarantine, { recursive: true, force: true });
      // A preview keeps no copy: where the checkout has readBundle, the preview reads in place.
      if (subject.parts.readBundle)
        add(`${subject.label}: survey + read, no copy, no scan`, await timed(() => subject.parts.readBundle(bundle)));
      if (subject.scanOne)
        add(
          `${subject.label}: scan of every file from memory`,
          await timed(() => {
            for (const file of files) subject.scanOne(file.entry, file.bytes);
          }),
        );
    }
    add(
      "floor: sha256 of every file from memory",
      await timed(() => {
        for (const file of files) createHash("sha256").update(file.bytes).digest();
      }),
    );
    const empty = fresh();
    add(
      "floor: create 10 000 empty files in 100 new folders",
      await timed(() => {
        for (let d = 0; d < 100; d++) mkdirSync(join(empty, `d${d}`));
        for (let i = 0; i < 10_000; i++) closeSync(openSync(join(empty, `d${i % 100}`, `f${i}`), "wx"));
      }),
    );
    rmSync(empty, { recursive: true, force: true });
    const copy = fresh();
    add(
      "floor: cp -r of the tree (a child process)",
      await timed(() => execFileSync("cp", ["-r", bundle, join(copy, "x")])),
    );
    rmSync(copy, { recursive: true, force: true });
  }
  const g = (xs) => {
    const s = summarize(xs);
    return `${Math.round(s.median).toLocaleString("en-US")} [${Math.round(s.min).toLocaleString("en-US")}–${Math.round(s.max).toLocaleString("en-US")}]`;
  };
  process.stdout.write(
    `\neach stage alone and its floors, medians of ${RUNS} runs [min–max], ms (CPU: this process, all threads; a child's not counted)\n\n| stage | wall | CPU |\n|---|---|---|\n`,
  );
  for (const [name, t] of rows) process.stdout.write(`| ${name} | ${g(t.wall)} | ${g(t.cpu)} |\n`);
}

try {
  const subjects = [await loadParts(repoRoot, "this checkout", "this")];
  if (argv.against) subjects.push(await loadParts(resolve(argv.against), argv.against, "against"));
  const bundle = join(scratch, "bundle-10k");
  generateBundle(bundle, {
    template: join(repoRoot, "apps", "fixtures", "node-notes"),
    name: "bench-bundle",
    files: 10_000,
    bytes: 100 * 1024 * 1024,
  });
  const manifest = JSON.parse(readFileSync(join(bundle, "app.json"), "utf8"));
  await walkReadHash(bundle);
  const baseline = [];
  const t = new Map(subjects.map((s) => [s, { stage: [], scan: [], listing: [], recompute: [], preview: [] }]));
  for (let r = 0; r < RUNS; r++) {
    let started = process.hrtime.bigint();
    await walkReadHash(bundle);
    baseline.push(msSince(started));
    // Rotated order: whatever the machine does across a run falls on each subject in turn.
    for (const subject of subjects.slice(r % subjects.length).concat(subjects.slice(0, r % subjects.length))) {
      const times = t.get(subject);
      const quarantine = mkdtempSync(join(scratch, "q-"));
      const staged = await subject.stageAndScan(bundle, quarantine, manifest, times);
      started = process.hrtime.bigint();
      await subject.previewListing(staged);
      times.listing.push(msSince(started));
      times.preview.push(times.stage.at(-1) + times.scan.at(-1) + times.listing.at(-1));
      started = process.hrtime.bigint();
      await subject.recomputeListing(staged);
      times.recompute.push(msSince(started));
      rmSync(quarantine, { recursive: true, force: true });
    }
  }
  const f = (xs) => {
    const s = summarize(xs);
    return `${Math.round(s.median).toLocaleString("en-US")} [${Math.round(s.min).toLocaleString("en-US")}–${Math.round(s.max).toLocaleString("en-US")}]`;
  };
  const base = summarize(baseline).median;
  const x = (xs) => `${(summarize(xs).median / base).toFixed(1)}×`;
  process.stdout.write(`apps preview phases, 10 000 files / 100 MiB, medians of ${RUNS} runs [min–max], ms\n\n`);
  process.stdout.write(
    `| phase | ${subjects.map((s) => `${s.label} ms | ×`).join(" | ")} |\n|---|${subjects.map(() => "---|---").join("|")}|\n`,
  );
  for (const [name, key] of [
    ["stage (survey + copy into quarantine; with scan-as-staged, each file's scan as it is written)", "stage"],
    ["scan (with scan-as-staged: only what needs the whole tree, rules across files, runtime reach)", "scan"],
    ["listing for the digest, as the preview makes it", "listing"],
    ["stage + scan + listing", "preview"],
    ["listing recomputed by reading the staged folder (verification)", "recompute"],
  ]) {
    process.stdout.write(
      `| ${name} | ${subjects.map((s) => `${f(t.get(s)[key])} | ${x(t.get(s)[key])}`).join(" | ")} |\n`,
    );
  }
  process.stdout.write(
    `| baseline: walk + read + sha256 | ${subjects.map(() => `${f(baseline)} | 1.0×`).join(" | ")} |\n`,
  );
  await stagesAlone(bundle, subjects);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
