// Which folders outside the system ones a sandboxed command needs to run: the real prefix of
// its interpreter. The owner's `node` or `python3` may live under their home (nvm, pyenv);
// the deny-by-default mount plan shows that one prefix, never the home around it.
import { execFileSync } from "node:child_process";
import { accessSync, constants, existsSync, openSync, readSync, closeSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { SYSTEM_FOLDERS } from "./mount-plan";

/** Finds an executable on PATH; relative PATH entries are ignored (they resolve against whatever folder we are in). */
export function findOnPath(name: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function isUnder(p: string, folder: string): boolean {
  const rel = path.relative(folder, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function isSystemPath(p: string): boolean {
  return SYSTEM_FOLDERS.some((folder) => isUnder(p, folder));
}

/**
 * Folders whose entries mean something else inside the sandbox: /proc follows the pid
 * namespace (`/proc/2/cwd` is the host's `/` here and the app's own folder there), /dev and
 * /sys are the sandbox's own. A path through one of them names one file to the bridge and
 * another to the child.
 */
const NAMESPACE_FOLDERS = ["/proc", "/dev", "/sys"];

/**
 * True when `written`, resolved one component at a time, never passes through a namespace
 * folder (by its own text or by a link it follows): only then does it name the same file on
 * the host, where the bridge resolves it, as in the sandbox, where the kernel does.
 */
function resolvesAlikeInSandbox(written: string): boolean {
  // Component by component as the kernel walks it: `..` after a link is taken from where the
  // link led, so nothing here is normalised as text first.
  const parts = written.split("/").filter((part) => part !== "" && part !== ".");
  for (let i = 1; i <= parts.length; i++) {
    const prefix = `/${parts.slice(0, i).join("/")}`;
    let real: string;
    try {
      real = realpathSync(prefix);
    } catch {
      return false;
    }
    if (NAMESPACE_FOLDERS.some((folder) => isUnder(prefix, folder) || isUnder(real, folder))) return false;
  }
  return true;
}

/** True when `file` is a regular file this process may execute (an interpreter, not a folder named like one). */
function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `/x/versions/3.11/bin/python3.11` -> `/x/versions/3.11`; a file outside a `bin/` -> its own folder. */
export function prefixOf(realFile: string): string {
  const dir = path.dirname(realFile);
  for (let at = dir; at !== path.dirname(at); at = path.dirname(at)) {
    if (path.basename(at) === "bin") return path.dirname(at);
  }
  return dir;
}

/** The interpreter a `#!` line names (`/usr/bin/env node` -> node on PATH), or undefined. */
function shebangInterpreter(file: string, pathEnv: string | undefined): string | undefined {
  let head: string;
  try {
    const fd = openSync(file, "r");
    try {
      const buf = Buffer.alloc(256);
      head = buf.subarray(0, readSync(fd, buf, 0, 256, 0)).toString("latin1");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith("#!")) return undefined;
  const [interp, ...rest] = head.slice(2).split("\n")[0]!.trim().split(/\s+/);
  if (!interp) return undefined;
  if (path.basename(interp) === "env") {
    const name = rest.find((word) => !word.startsWith("-"));
    return name ? findOnPath(name, pathEnv) : undefined;
  }
  return interp;
}

export interface InterpreterMountOptions {
  /** The command as the child will run it: absolute, or a name looked up on pathEnv. */
  file: string;
  /** The folder a relative file is resolved against (the app folder). */
  cwd: string;
  pathEnv: string | undefined;
  /** Folders never shown whole (the owner's home, the PersonalClaw home): a prefix equal to or holding one shrinks to the interpreter's own folder. */
  keepHidden: readonly string[];
}

/** Interpreters whose prefix may be shown; any other program must live in a system folder or the app's own. */
const INTERPRETER_NAME = /^(node|nodejs|python|python3(\.\d+)?)$/;

/**
 * The read-only folders `file` needs beyond the system folders and the app folder: the `bin/`
 * and `lib/` of the real prefix of an interpreter (after links: a venv's python is a link to its
 * base interpreter), found as the program itself or named by its `#!` line. Only a known
 * interpreter's, only an executable file, and only by a path that names the same file inside
 * the sandbox: a bundle's `#!` line naming any other file (a credential folder, say), a folder
 * named like an interpreter (`/etc/python3`), or a path through /proc adds no mount. Never a
 * home folder as a whole.
 */
export function interpreterMounts(opts: InterpreterMountOptions): string[] {
  const found = new Set<string>();
  const shown = (folder: string) => !opts.keepHidden.some((hidden) => isUnder(hidden, folder));
  const consider = (candidate: string | undefined, depth: number) => {
    if (!candidate || depth > 2) return;
    // Joined, not resolved: resolvesAlikeInSandbox reads every component as written.
    const absolute = path.isAbsolute(candidate)
      ? candidate
      : candidate.includes("/")
        ? `${opts.cwd}/${candidate}`
        : findOnPath(candidate, opts.pathEnv);
    if (!absolute) return;
    let real: string;
    try {
      real = realpathSync(absolute);
    } catch {
      return;
    }
    // A mount is added only for the interpreter the child will run: an executable file, named
    // by a path the sandbox reads the same way (a `#!` line is the app's own text).
    if (
      !isSystemPath(real) &&
      !isUnder(real, opts.cwd) &&
      INTERPRETER_NAME.test(path.basename(real)) &&
      isExecutableFile(real) &&
      resolvesAlikeInSandbox(absolute)
    ) {
      const prefix = prefixOf(real);
      for (const folder of [path.dirname(real), path.join(prefix, "lib")]) {
        if (shown(folder) && existsSync(folder)) found.add(folder);
      }
    }
    // Only the app's own scripts are read for a #! line: the interpreter they name is looked up as above.
    if (isUnder(real, opts.cwd)) consider(shebangInterpreter(real, opts.pathEnv), depth + 1);
  };
  consider(opts.file, 0);
  return [...found].sort();
}

/**
 * The absolute program a child runs: a bare `python`/`python3` is the host's real interpreter
 * (realPython), any other bare name is looked up on PATH, a relative path is the app's own.
 * Resolved by the bridge, so the child's PATH cannot pick a different program.
 */
export function resolveProgram(file: string, cwd: string, pathEnv: string | undefined): string | undefined {
  if (path.isAbsolute(file)) return file;
  if (file.includes("/")) return path.resolve(cwd, file);
  if (file === "python" || file === "python3") return realPython(pathEnv) ?? undefined;
  return findOnPath(file, pathEnv);
}

/** True when `program` is node itself (after links), which can open its sandbox doors in-process. */
export function isNodeProgram(program: string): boolean {
  try {
    return /^node(js)?$/.test(path.basename(realpathSync(program)));
  } catch {
    return false;
  }
}

const realPythonCache = new Map<string, string | null>();

/**
 * The real Python executable behind `python3` on PATH, asked of the host's own interpreter
 * (isolated mode, run from `/`, so nothing of a bundle is on its path). A version manager's
 * shim (pyenv) is a shell script that cannot run in the sandbox; its real interpreter can.
 */
export function realPython(pathEnv: string | undefined): string | null {
  const key = pathEnv ?? "";
  if (realPythonCache.has(key)) return realPythonCache.get(key)!;
  let found: string | null = null;
  const python = findOnPath("python3", pathEnv);
  if (python) {
    try {
      const out = execFileSync(python, ["-I", "-c", "import sys; print(sys.executable)"], {
        cwd: "/",
        env: { PATH: pathEnv ?? "" },
        encoding: "utf8",
        timeout: 10_000,
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
      if (path.isAbsolute(out)) found = out;
    } catch {
      found = null;
    }
  }
  realPythonCache.set(key, found);
  return found;
}
