// One lstat survey of a whole bundle, taken before anything is written (INST-03). Every later
// step copies from this survey, so what is staged is exactly what was judged here. The survey
// never follows a link: links are read with readlink and judged against the survey itself.
// Each folder is read with synchronous calls and the event loop runs between folders: for a
// folder of small entries a thread-pool round trip per lstat costs more than the lstat.
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { isNeverInstalled } from "./never-installed";
import { nextTurn } from "./next-turn";
import { refuse, type Refusal } from "./refusal";

export type SurveyEntryType = "file" | "dir" | "link";

export interface SurveyEntry {
  /** Relative to the bundle root, '/'-separated. */
  path: string;
  type: SurveyEntryType;
  /** Raw st_mode permission bits (normalised only when installed). */
  mode: number;
  size: number;
  dev: string;
  ino: string;
  nlink: number;
  mtimeNs: string;
  /** For links: the target exactly as readlink returned it. */
  linkTarget?: string;
}

export interface Survey {
  /** The bundle root the survey read (the owner's path, resolved once). */
  root: string;
  /** Pre-order: every folder comes before what it holds. */
  entries: SurveyEntry[];
  /** Never-installed entries that were left out (not read, not copied, not digested). */
  omitted: string[];
  totalBytes: number;
}

export interface StagingCaps {
  maxEntries: number;
  maxDepth: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

export const DEFAULT_STAGING_CAPS: StagingCaps = {
  maxEntries: 20_000,
  maxDepth: 32,
  maxFileBytes: 64 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
};

export type SurveyResult = { ok: true; survey: Survey } | Refusal;

// Kernel-like hop limit: a chain longer than this is a loop (ELOOP is 40 on Linux).
const MAX_LINK_HOPS = 40;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes a directory entry name, or null if it is not a name a bundle may hold. */
function decodeName(raw: Buffer): string | null {
  let name: string;
  try {
    name = utf8.decode(raw);
  } catch {
    return null; // not UTF-8: the same bytes would read differently elsewhere
  }
  // NUL and control characters forge log lines and terminal output; a backslash is a
  // separator on Windows and would let one name read as a path there.
  if (/[\u0000-\u001f\u007f-\u009f\\]/.test(name)) return null;
  return name;
}

/** Names that one filesystem keeps apart and another merges (NFC/NFD, letter case). */
function collisionKey(name: string): string {
  return name.normalize("NFC").toUpperCase().toLowerCase();
}

function specialKind(st: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (st.isFIFO()) return "pipe";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "block device";
  return "special file";
}

/** Surveys the bundle at `source` with one lstat walk; refuses naming the first offending path. */
export async function surveyTree(source: string, caps: StagingCaps = DEFAULT_STAGING_CAPS): Promise<SurveyResult> {
  let root: string;
  try {
    // The owner named this folder, so the one link we follow is the one they typed.
    root = await realpath(source);
    const st = await lstat(root);
    if (!st.isDirectory()) return refuse("bundle_source_invalid", { reason: "it is not a folder" });
  } catch (err) {
    return refuse("bundle_source_invalid", { reason: (err as NodeJS.ErrnoException).code ?? "unreadable" });
  }

  const entries: SurveyEntry[] = [];
  const omitted: string[] = [];
  let totalBytes = 0;
  const stack: string[] = [""];

  while (stack.length > 0) {
    const rel = stack.pop()!;
    const abs = rel === "" ? root : path.join(root, ...rel.split("/"));
    let rawNames: Buffer[];
    try {
      await nextTurn();
      rawNames = readdirSync(abs, { encoding: "buffer" });
    } catch (err) {
      return refuse("bundle_unreadable", {
        path: rel || ".",
        reason: (err as NodeJS.ErrnoException).code ?? "unreadable",
      });
    }
    rawNames.sort(Buffer.compare);
    const seenKeys = new Map<string, string>();
    const childDirs: string[] = [];

    for (const raw of rawNames) {
      const name = decodeName(raw);
      const shownRel = rel === "" ? raw.toString("utf8") : `${rel}/${raw.toString("utf8")}`;
      if (name === null) return refuse("bundle_name_invalid", { path: JSON.stringify(shownRel).slice(1, -1) });
      const childRel = rel === "" ? name : `${rel}/${name}`;
      if (isNeverInstalled(name)) {
        omitted.push(childRel);
        continue;
      }
      const key = collisionKey(name);
      const other = seenKeys.get(key);
      if (other !== undefined) return refuse("bundle_name_collision", { path: childRel, other });
      seenKeys.set(key, childRel);

      const depth = childRel.split("/").length;
      if (depth > caps.maxDepth) return refuse("bundle_too_deep", { path: childRel, limit: caps.maxDepth });
      if (entries.length + 1 > caps.maxEntries) return refuse("bundle_too_many_files", { limit: caps.maxEntries });

      let st;
      try {
        st = lstatSync(path.join(abs, name), { bigint: true });
      } catch (err) {
        return refuse("bundle_unreadable", {
          path: childRel,
          reason: (err as NodeJS.ErrnoException).code ?? "unreadable",
        });
      }
      const common = {
        path: childRel,
        mode: Number(st.mode & 0o7777n),
        size: Number(st.size),
        dev: st.dev.toString(),
        ino: st.ino.toString(),
        nlink: Number(st.nlink),
        mtimeNs: st.mtimeNs.toString(),
      };

      if (st.isSymbolicLink()) {
        // data/ is the app's own state and installed.json the gateway's record of the install:
        // either as a link would let a bundle aim the gateway's writes somewhere else.
        if (rel === "" && (key === "data" || key === "installed.json")) {
          return refuse("bundle_reserved_name_is_link", { path: childRel });
        }
        let target: string;
        try {
          const rawTarget = readlinkSync(path.join(abs, name), { encoding: "buffer" });
          target = utf8.decode(rawTarget);
        } catch {
          return refuse("bundle_link_dangling", { path: childRel });
        }
        entries.push({ ...common, type: "link", size: 0, linkTarget: target });
      } else if (st.isDirectory()) {
        entries.push({ ...common, type: "dir", size: 0 });
        childDirs.push(childRel);
      } else if (st.isFile()) {
        if (common.size > caps.maxFileBytes)
          return refuse("bundle_file_too_large", { path: childRel, limit: caps.maxFileBytes });
        totalBytes += common.size;
        if (totalBytes > caps.maxTotalBytes) return refuse("bundle_too_large", { limit: caps.maxTotalBytes });
        entries.push({ ...common, type: "file" });
      } else {
        // Pipes, sockets and devices are never opened: opening one can block forever or read
        // bytes that are not in the bundle at all.
        return refuse("bundle_special_file", { path: childRel, kind: specialKind(st) });
      }
    }
    // Reverse so the stack pops them in sorted order (pre-order, parents first).
    for (let i = childDirs.length - 1; i >= 0; i--) stack.push(childDirs[i]!);
  }

  const byPath = new Map(entries.map((e) => [e.path, e]));
  for (const entry of entries) {
    if (entry.type !== "link") continue;
    const refusal = judgeLink(entry, byPath);
    if (refusal) return refusal;
  }
  const hardLinkRefusal = judgeHardLinks(entries);
  if (hardLinkRefusal) return hardLinkRefusal;

  return { ok: true, survey: { root, entries, omitted, totalBytes } };
}

type Resolution =
  | { kind: "file"; path: string }
  | { kind: "dir"; path: string }
  | { kind: "absolute" | "escapes" | "dangling" | "loop" | "omitted" };

/**
 * Resolves a link the way the kernel would, but against the survey instead of the disk, so
 * nothing outside the bundle is ever touched. Climbing above the root fails at once, even if
 * the path would come back in ("leaves the bundle by even one step").
 */
function resolveLink(linkPath: string, byPath: Map<string, SurveyEntry>, hops: { n: number }): Resolution {
  if (++hops.n > MAX_LINK_HOPS) return { kind: "loop" };
  const target = byPath.get(linkPath)!.linkTarget!;
  if (target.startsWith("/")) return { kind: "absolute" };
  const stack = linkPath.split("/").slice(0, -1);
  const segments = target.split("/");
  const wantsFolder = target.endsWith("/");
  let current: Resolution = { kind: "dir", path: stack.join("/") };

  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg === "" || seg === ".") continue;
    if (current.kind === "file") return { kind: "dangling" }; // a file used as a folder
    if (seg === "..") {
      if (stack.length === 0) return { kind: "escapes" };
      stack.pop();
      current = { kind: "dir", path: stack.join("/") };
      continue;
    }
    if (isNeverInstalled(seg)) return { kind: "omitted" };
    stack.push(seg);
    const here = stack.join("/");
    const entry = byPath.get(here);
    if (!entry) return { kind: "dangling" };
    if (entry.type === "link") {
      const inner = resolveLink(here, byPath, hops);
      if (inner.kind !== "file" && inner.kind !== "dir") return inner;
      stack.splice(0, stack.length, ...(inner.path === "" ? [] : inner.path.split("/")));
      current = inner;
    } else {
      current = { kind: entry.type, path: here };
    }
  }
  if (current.kind === "file" && wantsFolder) return { kind: "dangling" };
  return current;
}

function isUnderData(p: string): boolean {
  return p.split("/")[0]!.toLowerCase() === "data";
}

function judgeLink(link: SurveyEntry, byPath: Map<string, SurveyEntry>): Refusal | null {
  const r = resolveLink(link.path, byPath, { n: 0 });
  const at = { path: link.path };
  switch (r.kind) {
    case "absolute":
      return refuse("bundle_link_absolute", at);
    case "escapes":
      return refuse("bundle_link_escapes", at);
    case "dangling":
      return refuse("bundle_link_dangling", at);
    case "loop":
      return refuse("bundle_link_loop", at);
    case "omitted":
      return refuse("bundle_link_into_omitted", at);
    case "dir":
      // The scan does not descend into a linked folder, so its contents would go unscanned.
      return refuse("bundle_link_to_folder", at);
    case "file":
      // data/ is kept across updates; a link across its edge would let old state and new code
      // read or overwrite each other.
      if (isUnderData(link.path) !== isUnderData(r.path)) return refuse("bundle_link_crosses_data", at);
      return null;
  }
}

/**
 * A hard link shares bytes with every other name of the file. If some of those names are not
 * in the survey, the file's bytes can be changed from outside the bundle (or were planted
 * from there), so the file is refused. Names inside never-installed folders are not surveyed,
 * so they count as outside too.
 */
function judgeHardLinks(entries: readonly SurveyEntry[]): Refusal | null {
  const names = new Map<string, { count: number; nlink: number; first: string }>();
  for (const e of entries) {
    if (e.type !== "file" || e.nlink <= 1) continue;
    const key = `${e.dev}:${e.ino}`;
    const seen = names.get(key);
    if (seen) seen.count++;
    else names.set(key, { count: 1, nlink: e.nlink, first: e.path });
  }
  for (const group of names.values()) {
    if (group.count < group.nlink) return refuse("bundle_hardlink_outside", { path: group.first });
  }
  return null;
}
