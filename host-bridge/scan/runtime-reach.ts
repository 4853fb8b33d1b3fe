// Which staged files the app runs. A finding's severity only decides the verdict in a file the
// app runs; a test file nothing loads cannot run a string by itself. The follow is deliberately
// simple (relative imports/requires, local Python modules, HTML src/href, script arguments):
// when it cannot tell, a code file that is not a test file is presumed to run.
import path from "node:path/posix";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { couldMatch } from "./required-literals";

/** What the scanner extracted from one file, for the follow. */
export interface FileRefs {
  /** JS/TS module specifiers (import, export-from, dynamic import, require). */
  jsSpecifiers: string[];
  /** Python imports: `module` for `import module`, `.` prefixes kept for relative imports; names are `from x import names`. */
  pyImports: Array<{ module: string; names: string[] }>;
  /** HTML src/href values. */
  htmlRefs: string[];
  /** Shell-script words that may name files. */
  words: string[];
  /** For package.json: the entry its package runs. */
  packageMain?: string;
}

const JS_EXT = /\.(?:js|mjs|cjs|ts|mts|cts|jsx|tsx)$/i;
const CODE_EXT =
  /\.(?:js|mjs|cjs|ts|mts|cts|jsx|tsx|py|pyw|sh|bash|zsh|fish|ksh|rb|pl|pm|php|ps1|psm1|bat|cmd|lua|html?|vbs)$/i;
const SHELL_EXT = /\.(?:sh|bash|zsh|ksh|fish)$/i;

// Each with a test that skips a file holding none of the literals every match needs.
const JS_PATTERNS = [
  /\bimport\s+(?:[^'"`;]{0,500}?\s+from\s+)?["']([^"'\n]+)["']/g,
  /\bexport\s+[^'"`;]{0,500}?\s+from\s+["']([^"'\n]+)["']/g,
  /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
  /\brequire\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
].map((re) => ({ re, mayMatch: couldMatch(re) }));

/** Extracts the references the follow needs from one file's text, decoding it only if some are sought. */
export function extractRefs(relPath: string, textOf: () => string, firstLine: string): FileRefs {
  const refs: FileRefs = { jsSpecifiers: [], pyImports: [], htmlRefs: [], words: [] };
  const base = path.basename(relPath);
  if (JS_EXT.test(relPath) || /^#!.*\bnode\b/.test(firstLine)) {
    const text = textOf();
    for (const { re, mayMatch } of JS_PATTERNS)
      if (mayMatch(text)) for (const m of text.matchAll(re)) refs.jsSpecifiers.push(m[1]!);
  }
  if (/\.pyw?$/i.test(relPath) || /^#!.*\bpython/.test(firstLine)) {
    const text = textOf();
    for (const m of text.matchAll(/^[ \t]*import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)/gm)) {
      for (const mod of m[1]!.split(",")) refs.pyImports.push({ module: mod.trim(), names: [] });
    }
    for (const m of text.matchAll(/^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w*, \t\n]+)\)?/gm)) {
      refs.pyImports.push({
        module: m[1]!,
        names: m[2]!
          .split(",")
          .map((n) => n.trim().split(/\s+/)[0]!)
          .filter(Boolean),
      });
    }
  }
  if (/\.html?$/i.test(relPath)) {
    const text = textOf();
    for (const m of text.matchAll(/\b(?:src|href)\s*=\s*["']([^"'#?]+)/gi)) refs.htmlRefs.push(m[1]!);
  }
  if (SHELL_EXT.test(relPath) || /^#!.*\b(?:ba|z|k|da)?sh\b/.test(firstLine)) {
    refs.words = textOf()
      .split(/[\s"'`;|&()<>=]+/)
      .filter((w) => w.length > 0 && w.length < 512);
  }
  if (base === "package.json") {
    try {
      const pkg = JSON.parse(textOf()) as { main?: unknown; exports?: unknown };
      if (typeof pkg.main === "string") refs.packageMain = pkg.main;
      else if (typeof pkg.exports === "string") refs.packageMain = pkg.exports;
    } catch {
      // An unparsable package.json names no entry; its package falls back to index.js.
    }
  }
  return refs;
}

/** Test files by the usual conventions: test/tests/__tests__ folders, *.test.*, *.spec.*, pytest names. */
export function isTestPath(relPath: string): boolean {
  const parts = relPath.split("/");
  const base = parts[parts.length - 1]!;
  if (parts.slice(0, -1).some((p) => /^(?:test|tests|__tests__|spec|specs)$/i.test(p))) return true;
  return (
    /\.(?:test|spec)\.[^.]+$/i.test(base) ||
    /_test\.py$/i.test(base) ||
    /^test_.*\.py$/i.test(base) ||
    base === "conftest.py"
  );
}

/** A file that is code by its name, its executable bit or its shebang. */
export function isCodeLike(relPath: string, executable: boolean, firstLine: string): boolean {
  return CODE_EXT.test(relPath) || executable || firstLine.startsWith("#!");
}

export interface ReachInput {
  /** Every staged regular file path. */
  files: ReadonlySet<string>;
  /** Staged link path -> the file path it finally names (staging proved it is a bundle file). */
  links: ReadonlyMap<string, string>;
  refs: ReadonlyMap<string, FileRefs>;
  manifest: AppManifest;
}

/** The set of staged file paths the app runs or loads, starting from what its manifest names. */
export function runtimeFiles(input: ReachInput): Set<string> {
  const { files, links, refs, manifest } = input;
  const asFile = (p: string): string | null => {
    const norm = path.normalize(p.replace(/^\.\//, ""));
    if (norm.startsWith("..") || norm.startsWith("/")) return null;
    if (files.has(norm)) return norm;
    return links.get(norm) ?? null;
  };
  const isDir = (p: string): boolean => {
    const prefix = p === "." || p === "" ? "" : `${p}/`;
    for (const f of files) if (f.startsWith(prefix)) return true;
    return false;
  };

  const reached = new Set<string>();
  const queue: string[] = [];
  const reach = (p: string | null) => {
    if (p && !reached.has(p)) {
      reached.add(p);
      queue.push(p);
    }
  };
  // An alias (link) and what it names both count as run.
  const reachPath = (p: string) => {
    const norm = path.normalize(p.replace(/^\.\//, ""));
    if (links.has(norm)) reached.add(norm);
    reach(asFile(norm));
  };

  const pyModule = (bases: string[], dotted: string): string[] => {
    const rel = dotted.split(".").join("/");
    const out: string[] = [];
    for (const b of bases) {
      const stem = b === "" || b === "." ? rel : `${b}/${rel}`;
      for (const candidate of [`${stem}.py`, `${stem}/__init__.py`]) {
        const hit = asFile(candidate);
        if (hit) {
          out.push(hit);
          // Importing a.b runs a/__init__.py first.
          const segs = stem.split("/");
          for (let i = 1; i < segs.length; i++) {
            const init = asFile(`${segs.slice(0, i).join("/")}/__init__.py`);
            if (init) out.push(init);
          }
          return out;
        }
      }
    }
    return out;
  };

  const commandWords = (command: string, args: readonly string[] = []) => {
    const words = [command, ...args];
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!;
      if (w === "-m" && words[i + 1]) {
        for (const hit of pyModule([""], words[i + 1]!)) reach(hit);
        const main = asFile(`${words[i + 1]!.split(".").join("/")}/__main__.py`);
        reach(main);
      }
      const value = w.includes("=") ? w.slice(w.indexOf("=") + 1) : w;
      if (value.length > 0) reachPath(value);
    }
  };

  // ---- roots: everything the manifest says the app or the platform runs
  if (manifest.backend) {
    if (manifest.backend.entryPoint) reachPath(manifest.backend.entryPoint);
    commandWords(manifest.backend.command, manifest.backend.args);
  }
  const uiEntries = [manifest.ui?.entry, ...(manifest.ui?.pages ?? []).map((p) => p.entryPoint)].filter(
    (e): e is string => !!e,
  );
  for (const entry of uiEntries) {
    reachPath(entry);
    // The browser loads whatever the UI folder serves, so all of it runs (unless it is the root).
    const dir = path.dirname(path.normalize(entry));
    if (dir !== "." && isDir(dir)) for (const f of files) if (f.startsWith(`${dir}/`)) reach(f);
  }
  for (const hook of [manifest.setup?.onInstall, manifest.setup?.onUninstall, manifest.setup?.onUpdate]) {
    if (hook) commandWords(hook.command, hook.args);
  }
  for (const server of Object.values(manifest.mcpServers ?? {}))
    if (server.command !== undefined) commandWords(server.command, server.args);

  // ---- follow what each reached file loads
  while (queue.length > 0) {
    const file = queue.shift()!;
    const r = refs.get(file);
    if (!r) continue;
    const dir = path.dirname(file);
    for (const spec of r.jsSpecifiers) for (const hit of resolveJs(dir, spec, asFile, refs)) reach(hit);
    for (const imp of r.pyImports) {
      const dots = /^\.*/.exec(imp.module)![0].length;
      const name = imp.module.slice(dots);
      let bases: string[];
      if (dots > 0) {
        let b = dir;
        for (let i = 1; i < dots; i++) b = path.dirname(b);
        bases = [b];
      } else bases = [dir, ""]; // the script's own folder is sys.path[0]; the app root is the cwd
      if (name) for (const hit of pyModule(bases, name)) reach(hit);
      for (const n of imp.names) {
        if (n === "*") continue;
        for (const hit of pyModule(bases, name ? `${name}.${n}` : n)) reach(hit);
      }
    }
    for (const ref of r.htmlRefs) {
      if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(ref)) continue; // another origin or a data: URL
      reachPath(ref.startsWith("/") ? ref.slice(1) : path.join(dir, ref));
    }
    for (const w of r.words) {
      if (w.startsWith("/") || w.startsWith("-")) continue;
      reachPath(path.join(dir, w));
      reachPath(w);
    }
  }
  return reached;
}

const JS_TRY = [
  "",
  ".js",
  ".mjs",
  ".cjs",
  ".ts",
  ".mts",
  ".cts",
  ".jsx",
  ".tsx",
  ".json",
  "/index.js",
  "/index.mjs",
  "/index.cjs",
  "/index.ts",
];

function resolveJs(
  dir: string,
  spec: string,
  asFile: (p: string) => string | null,
  refs: ReadonlyMap<string, FileRefs>,
): string[] {
  const tryAll = (stem: string): string | null => {
    for (const ext of JS_TRY) {
      const hit = asFile(stem + ext);
      if (hit) return hit;
    }
    // TypeScript sources import their compiled name: './x.js' is x.ts on disk.
    if (/\.[cm]?js$/.test(stem)) return asFile(stem.replace(/\.([cm]?)js$/, ".$1ts"));
    return null;
  };
  if (spec.startsWith("./") || spec.startsWith("../")) {
    const hit = tryAll(path.join(dir, spec));
    return hit ? [hit] : [];
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec) || spec.startsWith("/")) return []; // node:fs, URLs, absolute
  // A bare specifier: the nearest node_modules/<package> up the folder chain.
  const parts = spec.split("/");
  const pkgName = spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
  const sub = parts.slice(spec.startsWith("@") ? 2 : 1).join("/");
  for (let d = dir; ; d = path.dirname(d)) {
    const pkgDir = d === "." ? `node_modules/${pkgName}` : `${d}/node_modules/${pkgName}`;
    const pkgJson = asFile(`${pkgDir}/package.json`);
    if (pkgJson || tryAll(`${pkgDir}/index`)) {
      const out: string[] = [];
      if (sub) {
        const hit = tryAll(`${pkgDir}/${sub}`);
        if (hit) out.push(hit);
      } else {
        const main = pkgJson ? refs.get(pkgJson)?.packageMain : undefined;
        const hit = (main && tryAll(path.join(pkgDir, main))) || tryAll(`${pkgDir}/index`);
        if (hit) out.push(hit);
      }
      return out;
    }
    if (d === "." || d === "") return [];
  }
}
