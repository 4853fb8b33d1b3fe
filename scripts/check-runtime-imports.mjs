// One runtime per folder: workers/ and durable/ run in workerd and never import node:*;
// host-bridge/ is Node and never imports cloudflare:*; kernel/ imports only zod
// and its own files. And one direction inside the worker: the guards and the proxy sit below
// the route handlers, so neither imports from workers/routes/. Fails with the offending file and line.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

// The tree to check: the repository, or the folder given as the first argument (tests).
const root = process.argv[2] ?? new URL("..", import.meta.url).pathname;
const rules = [
  { dir: "workers", forbidden: /^node:|^(fs|path|child_process|os|crypto|http|net)$/, why: "workers/ runs in workerd" },
  { dir: "durable", forbidden: /^node:|^(fs|path|child_process|os|crypto|http|net)$/, why: "durable/ runs in workerd" },
  { dir: "host-bridge", forbidden: /^cloudflare:/, why: "host-bridge/ runs in Node" },
  {
    dir: "kernel",
    forbidden: /^(?!zod$|\.\/|\.\.\/(contracts|crypto|text|time|rules)\/)/,
    why: "the kernel imports nothing but zod",
  },
  { dir: "workers/guards", forbidden: /(^|\/)routes\//, why: "guards/ sit below routes/" },
  { dir: "workers/proxy", forbidden: /(^|\/)routes\//, why: "proxy/ sits below routes/" },
];
const IMPORT = /(?:^|\s)(?:import|export)\s(?:[^'"]*?\sfrom\s)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

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

const problems = [];
for (const rule of rules) {
  for (const file of sourceFiles(join(root, rule.dir))) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2];
      if (rule.forbidden.test(specifier)) {
        const line = text.slice(0, match.index).split("\n").length;
        problems.push(`${relative(root, file)}:${line} imports ${specifier} (${rule.why})`);
      }
    }
  }
}
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log("runtime imports: every folder keeps to its runtime");
