// The layers of the product, held by `npm test`. Each folder keeps to its runtime (workers/ and
// durable/ run in workerd and never import node:*; host-bridge/ is Node and never imports
// cloudflare:*), and imports point one way only:
//
//   kernel/  <-  durable/  <-  worker services (workers/*.ts, workers/lifecycle/)  <-  workers/routes, guards, proxy
//   kernel/  <-  host-bridge/
//
// kernel/ imports nothing but zod and itself (and croner, in kernel/time/ only); durable/ only the kernel and itself; the bridge only
// the kernel and itself; the worker's services never import a value from its routes, guards or
// proxy (a type naming the request a route hands down may be imported: types are erased); guards
// and proxy never import routes/. The worker's entry modules (workers/index.ts and
// workers/durable-objects.ts) compose every layer. No value import closes a cycle, inside a layer
// or between layers. Each problem names the file and line.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// The tree to check: the repository, or the folder given as the first argument (tests).
const root = process.argv[2] ?? new URL("..", import.meta.url).pathname;

const NODE_MODULE = /^node:|^(fs|path|child_process|os|crypto|http|net)$/;
const RUNTIME_RULES = [
  { dir: "workers/", forbidden: NODE_MODULE, why: "workers/ runs in workerd" },
  { dir: "durable/", forbidden: NODE_MODULE, why: "durable/ runs in workerd" },
  { dir: "host-bridge/", forbidden: /^cloudflare:/, why: "host-bridge/ runs in Node" },
  { dir: "kernel/", forbidden: /^(?!zod$|croner$|\.)/, why: "the kernel imports nothing but zod" },
  // Schedules are croner's (dependency-free, runs in both runtimes): the one package beside zod, in kernel/time/ only.
  { dir: "kernel/", forbidden: /^croner$/, except: "kernel/time/", why: "croner is read in kernel/time/ only" },
];

/** The layer a product file belongs to, or null for a file outside the product (tests, scripts, web). */
function layerOf(path) {
  if (path.startsWith("kernel/")) return "kernel";
  if (path.startsWith("durable/")) return "durable";
  if (path.startsWith("host-bridge/")) return "bridge";
  if (path === "workers/index.ts" || path === "workers/durable-objects.ts") return "entry";
  if (/^workers\/(routes|guards|proxy)\//.test(path)) return path.split("/")[1];
  if (path.startsWith("workers/")) return "service";
  return null;
}

// What each layer may import from the product, by the layer of the imported file.
const MAY_IMPORT = {
  kernel: { layers: ["kernel"], why: "the kernel imports nothing but zod" },
  durable: { layers: ["kernel", "durable"], why: "durable/ imports only the kernel" },
  bridge: { layers: ["kernel", "bridge"], why: "host-bridge/ imports only the kernel" },
  service: {
    layers: ["kernel", "durable", "service"],
    types: ["routes", "guards", "proxy"],
    why: "the worker's services sit below routes/, guards/ and proxy/",
  },
  proxy: { layers: ["kernel", "durable", "service", "guards", "proxy"], why: "proxy/ sits below routes/" },
  guards: { layers: ["kernel", "durable", "service", "guards", "proxy"], why: "guards/ sit below routes/" },
  routes: { layers: ["kernel", "durable", "service", "guards", "proxy", "routes"], why: "" },
  entry: { layers: ["kernel", "durable", "service", "guards", "proxy", "routes", "entry"], why: "" },
};

const IMPORT =
  /(?:^|\n)[ \t]*(?:import|export)\s+(type\s+)?(?:([^'";]*?)\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** True when an import names only types: `import type {...}`, or braces whose every name is marked `type`. */
function namesOnlyTypes(typeKeyword, clause) {
  if (typeKeyword) return true;
  const names = /^\{([^}]*)\}$/
    .exec(clause?.trim() ?? "")?.[1]
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  return names !== undefined && names.length > 0 && names.every((name) => name.startsWith("type "));
}

function* sourceFiles(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mjs|js)$/.test(name) && !/\.test\.ts$/.test(name)) yield path;
  }
}

/** The file a relative specifier names, or null when it names none (a package, a missing file). */
function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith(".")) return null;
  const base = resolve(dirname(from), specifier);
  const candidates = [base, `${base}.ts`, base.replace(/\.js$/, ".ts"), `${base}.mjs`, join(base, "index.ts")];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile()) ?? null;
}

/** Every import of every product file: its line, specifier, whether it names only types, and the file it resolves to. */
function readImports() {
  const files = new Map();
  for (const dir of ["kernel", "durable", "workers", "host-bridge"]) {
    for (const file of sourceFiles(join(root, dir))) {
      const text = readFileSync(file, "utf8");
      const imports = [];
      for (const match of text.matchAll(IMPORT)) {
        const specifier = match[3] ?? match[4];
        const offset = match.index + match[0].search(/\S/);
        imports.push({
          specifier,
          typeOnly: namesOnlyTypes(match[1], match[2]),
          line: text.slice(0, offset).split("\n").length,
          target: resolveSpecifier(file, specifier),
        });
      }
      files.set(file, imports);
    }
  }
  return files;
}

function layerProblems(files) {
  const problems = [];
  for (const [file, imports] of files) {
    const path = relative(root, file);
    const layer = layerOf(path);
    for (const { specifier, typeOnly, line, target } of imports) {
      for (const rule of RUNTIME_RULES) {
        if (
          path.startsWith(rule.dir) &&
          !(rule.except && path.startsWith(rule.except)) &&
          rule.forbidden.test(specifier)
        )
          problems.push(`${path}:${line} imports ${specifier} (${rule.why})`);
      }
      if (!specifier.startsWith(".")) continue;
      // A file that does not exist yet still lies in the layer its path names.
      const targetPath = relative(root, target ?? resolve(dirname(file), specifier));
      const targetLayer = layerOf(targetPath);
      if (targetLayer === null) {
        problems.push(`${path}:${line} imports ${specifier}, outside the product's layers`);
        continue;
      }
      const may = MAY_IMPORT[layer];
      const allowed = may.layers.includes(targetLayer) || (typeOnly && may.types?.includes(targetLayer));
      if (!allowed) problems.push(`${path}:${line} imports ${specifier} (${may.why})`);
    }
  }
  return problems;
}

/** Value-import cycles, each named by the file and line whose import closes it. */
function cycleProblems(files) {
  const problems = [];
  const state = new Map(); // file -> "open" while on the path, "done" after
  const path = [];
  const visit = (file) => {
    state.set(file, "open");
    path.push(file);
    for (const { typeOnly, line, target } of files.get(file) ?? []) {
      if (typeOnly || target === null || !files.has(target)) continue;
      if (state.get(target) === "open") {
        const loop = [...path.slice(path.indexOf(target)), target].map((f) => relative(root, f));
        problems.push(`${relative(root, file)}:${line} closes an import cycle: ${loop.join(" -> ")}`);
      } else if (!state.has(target)) visit(target);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...files.keys()].sort()) if (!state.has(file)) visit(file);
  return problems;
}

const files = readImports();
const problems = [...layerProblems(files), ...cycleProblems(files)];
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log("runtime imports: every folder keeps to its runtime and its layer, and no import closes a cycle");
