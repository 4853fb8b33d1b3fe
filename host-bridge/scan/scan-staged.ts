// Scans the whole staged tree (INST-07/08/09): no folder is skipped, every regular file is read
// whole up to 16 MiB, and a file that cannot be read whole is an `unscanned_file` finding,
// never a silent pass. Each finding says whether the app runs the file it sits in.
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import posix from "node:path/posix";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { FILES_IN_FLIGHT, mapInOrder } from "../staging/bounded-parallel";
import type { StagedEntry } from "../staging/stage-bundle";
import { isRequirementsFile, SCAN_RULES, type ScanRule, type Severity } from "./rules";
import { lineSieve } from "./line-sieve";
import { extractRefs, isCodeLike, isTestPath, runtimeFiles, type FileRefs } from "./runtime-reach";

export const MAX_SCANNED_FILE_BYTES = 16 * 1024 * 1024;
// One rule can match thousands of lines of a vendored file; the review needs a few to judge.
const MAX_FINDINGS_PER_RULE_PER_FILE = 20;

export type Verdict = "clean" | "warning" | "dangerous";

export interface Finding {
  rule: string;
  severity: Severity;
  /** Relative to the bundle root; "app.json" for manifest findings. */
  path: string;
  /** 1-based; 0 when the finding is about the file or folder as a whole. */
  line: number;
  /** Whether the app (or the platform for it) runs or loads this file. */
  runs: boolean;
  message: string;
}

export interface ScanResult {
  verdict: Verdict;
  findings: Finding[];
}

export interface ScanOptions {
  maxFileBytes?: number;
  /**
   * Files already scanned from exactly the bytes staging wrote into them (scan-as-staged.ts), by
   * path: the scan does not read those back.
   */
  scanned?: ReadonlyMap<string, FileScan>;
}

/** What one file adds to the scan: its findings, whether it looks like code, what it references. */
export interface FileScan {
  found: Unplaced[];
  isCodeLike: boolean;
  refs: FileRefs | null;
}

/** A finding before the runtime reach says whether its file runs (some know already). */
export type Unplaced = Omit<Finding, "runs"> & { runs?: boolean };

const tooLarge = (limit: number) => `it is larger than ${limit} bytes`;

function unreadWithoutCopy(file: string): never {
  throw new Error(`${file} was neither shown to the scan nor staged to be read back`);
}

/** Reads a staged file whole with a no-follow open, or says why it could not. */
async function readWhole(
  abs: string,
  limit: number,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; reason: string }> {
  let fh;
  try {
    fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    return { ok: false, reason: `it could not be opened (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { ok: false, reason: "it is not a regular file" };
    if (st.size > limit) return { ok: false, reason: tooLarge(limit) };
    const buf = await fh.readFile();
    if (buf.length > limit) return { ok: false, reason: tooLarge(limit) };
    return { ok: true, bytes: buf };
  } catch (err) {
    return { ok: false, reason: `it could not be read (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    await fh.close();
  }
}

const CONTENT_RULES = SCAN_RULES.filter((r) => r.match.kind === "content");
const ruleById = new Map(SCAN_RULES.map((r) => [r.id, r]));

// The content rules every file gets, and their sieve, built once at load: it throws there on a
// rule pattern it cannot read.
const ANY_FILE_RULES = SCAN_RULES.flatMap((rule) =>
  rule.match.kind === "content" && rule.match.files === "any" ? [{ rule, pattern: rule.match.pattern }] : [],
);
const ANY_FILE_SIEVE = lineSieve(ANY_FILE_RULES.map((r) => r.pattern));

function finding(rule: ScanRule, p: string, line: number, detail?: string): Unplaced {
  return {
    rule: rule.id,
    severity: rule.severity,
    path: p,
    line,
    message: detail ? `${rule.reason} (${detail})` : rule.reason,
  };
}

/** 1-based number of the line that starts at byte `start`. */
function lineNumberAt(bytes: Buffer, start: number): number {
  let line = 1;
  for (let at = bytes.indexOf(0x0a); at >= 0 && at < start; at = bytes.indexOf(0x0a, at + 1)) line++;
  return line;
}

/**
 * Every content rule on every line (split on "\n") of the file's UTF-8 text. Outside requirement
 * files the sieve first picks the lines that may match and the rules each may match, and only
 * those lines are decoded and tested, in line order and rule order: the same tests, in the same
 * order, that match anything at all.
 */
function contentFindings(relPath: string, bytes: Buffer, text: () => string): Unplaced[] {
  const out: Unplaced[] = [];
  const counts = new Map<string, number>();
  const record = (rule: ScanRule, line: () => number) => {
    const n = (counts.get(rule.id) ?? 0) + 1;
    counts.set(rule.id, n);
    if (n <= MAX_FINDINGS_PER_RULE_PER_FILE) out.push(finding(rule, relPath, line()));
  };
  const requirements = isRequirementsFile(relPath);
  const sieved = requirements ? null : ANY_FILE_SIEVE.candidates(bytes);
  if (sieved !== null) {
    for (const candidate of sieved) {
      const line = bytes.subarray(candidate.start, candidate.end).toString("utf8");
      for (const index of candidate.patterns) {
        const { rule, pattern } = ANY_FILE_RULES[index]!;
        if (pattern.test(line)) record(rule, () => lineNumberAt(bytes, candidate.start));
      }
    }
    return out;
  }
  const lines = text().split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    for (const rule of CONTENT_RULES) {
      if (rule.match.kind !== "content") continue;
      if (rule.match.files === "requirements" && !requirements) continue;
      // A pip comment is not an instruction.
      const line = rule.match.files === "requirements" ? raw.replace(/(?:^|\s)#.*$/, "") : raw;
      if (rule.match.pattern.test(line)) record(rule, () => i + 1);
    }
  }
  return out;
}

function lifecycleFindings(relPath: string, text: string): Unplaced[] {
  const rule = ruleById.get("npm-lifecycle-script")!;
  if (rule.match.kind !== "npm-lifecycle") return [];
  let scripts: unknown;
  try {
    scripts = (JSON.parse(text) as { scripts?: unknown }).scripts;
  } catch {
    return [];
  }
  if (!scripts || typeof scripts !== "object") return [];
  const out: Unplaced[] = [];
  for (const name of rule.match.scripts) {
    if (!Object.prototype.hasOwnProperty.call(scripts, name)) continue;
    const idx = text.search(new RegExp(`"${name}"\\s*:`));
    const line = idx < 0 ? 0 : text.slice(0, idx).split("\n").length;
    out.push(finding(rule, relPath, line, `script "${name}"`));
  }
  return out;
}

function manifestFindings(manifest: AppManifest): Unplaced[] {
  const out: Unplaced[] = [];
  for (const rule of SCAN_RULES) {
    if (rule.match.kind !== "manifest-dependency") continue;
    const list = manifest.dependencies?.[rule.match.list] ?? [];
    for (const spec of list) {
      if (rule.match.pattern.test(spec))
        out.push({ ...finding(rule, "app.json", 0, `dependencies.${rule.match.list}: ${spec}`), runs: true });
    }
  }
  return out;
}

/** Folders holding HEAD, objects/ and refs/ — a git repository whatever it is called. */
function embeddedGitFindings(entries: readonly StagedEntry[]): Unplaced[] {
  const rule = ruleById.get("embedded-git-repository")!;
  const kinds = new Map(entries.map((e) => [e.path, e.type]));
  const folders = new Set<string>([""]);
  for (const e of entries) if (e.type === "dir") folders.add(e.path);
  const out: Unplaced[] = [];
  for (const dir of folders) {
    const at = (name: string) => (dir === "" ? name : `${dir}/${name}`);
    if (kinds.get(at("HEAD")) === "file" && kinds.get(at("objects")) === "dir" && kinds.get(at("refs")) === "dir") {
      // Git acts on it whenever any git command runs inside it, whether or not the app loads it.
      out.push({ ...finding(rule, dir === "" ? "." : dir, 0), runs: true });
    }
  }
  return out;
}

/** Resolves each staged link to the file it finally names (staging proved it stays inside). */
function resolveLinks(entries: readonly StagedEntry[]): Map<string, string> {
  const targets = new Map(entries.filter((e) => e.type === "link").map((e) => [e.path, e.linkTarget!]));
  const out = new Map<string, string>();
  for (const start of targets.keys()) {
    let current = start;
    for (let hops = 0; hops < 40 && targets.has(current); hops++) {
      current = posix.normalize(posix.join(posix.dirname(current), targets.get(current)!));
    }
    out.set(start, current);
  }
  return out;
}

const planted = ruleById.get("planted-package-config")!;
const plantedNames =
  planted.match.kind === "file-name" ? new Set(planted.match.names.map((n) => n.toLowerCase())) : new Set<string>();

function baseName(relPath: string): string {
  return relPath.slice(relPath.lastIndexOf("/") + 1);
}

function isExecutable(entry: Pick<StagedEntry, "mode">): boolean {
  return (entry.mode & 0o111) !== 0;
}

/**
 * A planted package-manager config. Tools read these from the folder they run in, and the app
 * root is where hooks and backends start, so only one at the root runs.
 */
function plantedFinding(entry: Pick<StagedEntry, "path">): Unplaced[] {
  if (!plantedNames.has(baseName(entry.path).toLowerCase())) return [];
  return [{ ...finding(planted, entry.path, 0), runs: !entry.path.includes("/") }];
}

/**
 * Scans one file read whole: the part of the scan that needs nothing but the file. Its UTF-8 text
 * is decoded only where a rule needs it; the first line (up to the first "\n" byte) decodes alone
 * to the same string, since a newline byte ends any broken sequence before it.
 */
export function scanFileBytes(entry: Pick<StagedEntry, "path" | "mode">, bytes: Buffer): FileScan {
  let decoded: string | undefined;
  const text = () => (decoded ??= bytes.toString("utf8"));
  const nl = bytes.indexOf(0x0a);
  const firstLine = (nl < 0 ? bytes : bytes.subarray(0, nl)).toString("utf8");
  const found = plantedFinding(entry);
  const refs = extractRefs(entry.path, text, firstLine);
  found.push(...contentFindings(entry.path, bytes, text));
  if (baseName(entry.path) === "package.json") found.push(...lifecycleFindings(entry.path, text()));
  return { found, isCodeLike: isCodeLike(entry.path, isExecutable(entry), firstLine), refs };
}

/**
 * Scans a staged bundle; the verdict is 'dangerous' only for a dangerous finding in a file the
 * app runs. A file `opts.scanned` holds is not read again; with no staged folder (a review that
 * kept no copy) it must hold every file the scan reads whole.
 */
export async function scanStaged(
  dir: string | null,
  entries: readonly StagedEntry[],
  manifest: AppManifest,
  opts: ScanOptions = {},
): Promise<ScanResult> {
  const limit = opts.maxFileBytes ?? MAX_SCANNED_FILE_BYTES;
  const unplaced: Unplaced[] = [];
  const refs = new Map<string, FileRefs>();
  const codeLike = new Set<string>();
  const files = new Set<string>();
  // Each file is read once, several at a time, unless staging already showed it; what each
  // yields is kept in entry order, so findings never depend on which read finished first.
  const fileEntries = entries.filter((e) => e.type === "file");
  const perFile = await mapInOrder(fileEntries, FILES_IN_FLIGHT, async (entry): Promise<FileScan> => {
    const known = opts.scanned?.get(entry.path);
    if (known) return known;
    // Staging checked each file's size against the survey: one over the limit is not opened.
    const read =
      entry.size > limit
        ? { ok: false as const, reason: tooLarge(limit) }
        : dir === null
          ? unreadWithoutCopy(entry.path)
          : await readWhole(path.join(dir, ...entry.path.split("/")), limit);
    if (read.ok) return scanFileBytes(entry, read.bytes);
    const found = plantedFinding(entry);
    found.push(finding(ruleById.get("unscanned_file")!, entry.path, 0, read.reason));
    return { found, isCodeLike: isCodeLike(entry.path, isExecutable(entry), ""), refs: null };
  });
  fileEntries.forEach((entry, i) => {
    const one = perFile[i]!;
    files.add(entry.path);
    if (one.isCodeLike) codeLike.add(entry.path);
    if (one.refs) refs.set(entry.path, one.refs);
    unplaced.push(...one.found);
  });
  unplaced.push(...embeddedGitFindings(entries));
  unplaced.push(...manifestFindings(manifest));

  const runtime = runtimeFiles({ files, links: resolveLinks(entries), refs, manifest });
  // Reached files run. Where the follow cannot tell, a code file that is not a test presumes to
  // run; only a test file (or a document) that nothing reaches is treated as not running.
  const runs = (p: string) => runtime.has(p) || (codeLike.has(p) && !isTestPath(p));

  const findings: Finding[] = unplaced.map((f) => ({ ...f, runs: f.runs ?? runs(f.path) }));
  findings.sort(
    (a, b) =>
      Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)) || a.line - b.line || a.rule.localeCompare(b.rule),
  );
  return { verdict: verdictOf(findings), findings };
}

export function verdictOf(findings: readonly Finding[]): Verdict {
  if (findings.some((f) => f.severity === "dangerous" && f.runs)) return "dangerous";
  return findings.length > 0 ? "warning" : "clean";
}
