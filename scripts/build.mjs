// Builds the worker bundle, the CLI/host bridge and the route renderer with esbuild, only
// when a source is newer than the last build (so `personalclaw start` stays fast). Beside the
// shipped bundles in dist/ it builds the test build in dist/test/: the same entries with
// TEST_BUILD true, and a worker whose route table adds test/build/test-routes.ts
// (docs/design/test-build.md). The shipped bundles are built with TEST_BUILD false, so every
// branch it guards is gone from them.
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
  existsSync,
} from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { execFileSync } from "node:child_process";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCES = ["kernel", "workers", "durable", "host-bridge", "scripts", "test/build", "package.json"];
const STAMP = join(root, "dist", ".build-stamp");

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(path)) {
    if (name === "node_modules") continue;
    newest = Math.max(newest, newestMtime(join(path, name)));
  }
  return newest;
}

/** True when dist/ is missing or older than any source. */
export function isBuildStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return SOURCES.some((source) => newestMtime(join(root, source)) > built);
}

/** How the gateway worker is bundled for workerd (bench/ builds its variants the same way). */
export const WORKER_BUILD = {
  entryPoints: ["workers/index.ts"],
  format: "esm",
  platform: "neutral",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  external: ["cloudflare:*"],
};

/**
 * How the CLI (with the host bridge it runs) is bundled for Node: one file with its libraries in
 * it, so `personalclaw start` parses one module instead of resolving and loading ~100 package
 * files one by one (docs/performance.md "Start and idle memory": 0.3 s sooner, 8 MiB less).
 * What a command reaches only through `import()` (the MCPB signature and archive readers, the
 * MCP SDK of `mcp run`, the edge link's undici) is split into chunk-*.mjs files beside it, so
 * `start` and the short commands compile only what they run. A chunk's name holds its hash; one
 * the new build did not write is removed once no process runs this tree's CLI (pruneOldChunks):
 * a running gateway may still import the chunks of its own build.
 * Left outside: better-sqlite3 (a native addon), workerd (its binary is found by path) and
 * esbuild (loaded only to build). The banner gives the bundled CommonJS libraries a `require`.
 */
const NODE_BUILD = {
  outExtension: { ".js": ".mjs" },
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["cloudflare:*", "better-sqlite3", "workerd", "esbuild"],
  banner: {
    js: 'import { createRequire as createBundleRequire } from "node:module";\nconst require = createBundleRequire(import.meta.url);',
  },
};

/** The CLI alone is split: cli.mjs and the chunks its `import()`s load (the render scripts stay one file each). */
const CLI_SPLIT = { splitting: true, chunkNames: "chunk-[hash]" };

/** The shipped bundles and the test build's, as esbuild options. */
const BUNDLES = {
  shipped: [
    { ...WORKER_BUILD, outfile: "dist/worker.js" },
    { ...NODE_BUILD, ...CLI_SPLIT, entryPoints: { cli: "host-bridge/cli/main.ts" }, outdir: "dist" },
    {
      ...NODE_BUILD,
      entryPoints: {
        "render-routes": "scripts/render-routes.ts",
        "render-manifest": "scripts/render-manifest.ts",
        "render-child-env": "scripts/render-child-env.ts",
        "render-cli": "scripts/render-cli.ts",
        "render-review-words": "scripts/render-review-words.ts",
        "render-openapi": "scripts/render-openapi.ts",
        "render-app-schema": "scripts/render-app-schema.ts",
      },
      outdir: "dist",
    },
  ],
  test: [
    { ...WORKER_BUILD, entryPoints: ["test/build/worker.ts"], outfile: "dist/test/worker.js" },
    { ...NODE_BUILD, ...CLI_SPLIT, entryPoints: { cli: "host-bridge/cli/main.ts" }, outdir: "dist/test" },
  ],
};

/** Builds every bundle into dist/ and dist/test/. */
export async function buildAll() {
  // Loaded only to build: every CLI run imports this file to ask whether dist/ is stale.
  const { build, stop } = await import("esbuild");
  try {
    await buildBundles(build);
  } finally {
    // esbuild builds in a service process of its own (300 MiB once it has built these); left
    // running, it would live as long as the gateway that `personalclaw start` built for.
    await stop();
  }
  const reserved = execFileSync(process.execPath, [join(root, "dist", "render-routes.mjs"), "--reserved-app-names"], {
    encoding: "utf8",
  });
  writeFileSync(join(root, "dist", "reserved-app-names.json"), reserved);
  writeFileSync(STAMP, new Date().toISOString());
}

async function buildBundles(build) {
  mkdirSync(join(root, "dist", "test"), { recursive: true });
  // minifySyntax is what drops the `if (false)` branches; names and layout stay readable.
  const common = {
    bundle: true,
    minifySyntax: true,
    logLevel: "warning",
    target: "es2022",
    absWorkingDir: root,
    sourcemap: "linked",
    metafile: true,
  };
  const results = await Promise.all([
    ...BUNDLES.shipped.map((options) => build({ ...common, ...options, define: { TEST_BUILD: "false" } })),
    ...BUNDLES.test.map((options) => build({ ...common, ...options, define: { TEST_BUILD: "true" } })),
  ]);
  const written = new Set(
    results.flatMap((result) => Object.keys(result.metafile.outputs)).map((out) => join(root, out)),
  );
  pruneOldChunks(written);
}

/** This tree's CLI entries: a process naming one of them in its command line may import chunks. */
const CLI_ENTRIES = ["bin/personalclaw.mjs", "dist/cli.mjs", "dist/test/cli.mjs"].map((p) => join(root, p));

/** True when a process other than this one runs this tree's CLI (its command line names an entry). */
export function cliRunsElsewhere() {
  const entries = new Set(CLI_ENTRIES.map((p) => (existsSync(p) ? realpathSync(p) : p)));
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let args;
    try {
      args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // ended meanwhile, or not ours to read
    }
    for (const arg of args.slice(1)) {
      if (!arg.endsWith(".mjs")) continue;
      try {
        if (entries.has(realpathSync(arg))) return true;
      } catch {
        // a relative path or a file gone: not one of ours
      }
    }
  }
  return false;
}

/**
 * Removes the chunk files of earlier builds from dist/ and dist/test/ (those `written` does not
 * hold), unless another process runs this tree's CLI: it may still `import()` one of them.
 */
function pruneOldChunks(written) {
  if (cliRunsElsewhere()) return;
  for (const dir of [join(root, "dist"), join(root, "dist", "test")]) {
    for (const name of readdirSync(dir)) {
      if (!/^chunk-[A-Z0-9]+\.mjs(\.map)?$/.test(name)) continue;
      const path = join(dir, name);
      if (!written.has(path)) rmSync(path, { force: true });
    }
  }
}

/** Builds when stale; returns whether it built. */
export async function buildIfStale() {
  if (!isBuildStale()) return false;
  await buildAll();
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await buildAll();
}
