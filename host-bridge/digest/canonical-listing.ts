// The canonical listing of an app tree: every file and link, sorted by path bytes, with its
// mode class, link target and content hash. The same function lists the staged copy and the
// installed folder, so "installed bytes == consented bytes" is one equality of listings. The
// preview builds the same listing from staging's own hashes (listingOfStaged), without a re-read.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { FILES_IN_FLIGHT, mapInOrder } from "../staging/bounded-parallel";
import { isNeverInstalled } from "../staging/never-installed";
import { refuse, type Refusal } from "../staging/refusal";
import type { StagedEntry } from "../staging/stage-bundle";

export type ListingEntry =
  | { path: string; type: "file"; mode: "exec" | "plain"; sha256: string }
  | { path: string; type: "link"; target: string };

export type ListingResult = { ok: true; listing: ListingEntry[] } | Refusal;

export interface ListingOptions {
  /** Top-level names the installer adds itself (e.g. data, installed.json), left out of the listing. */
  ignoreTopLevel?: readonly string[];
}

function byPathBytes(a: { path: string }, b: { path: string }): number {
  return Buffer.compare(Buffer.from(a.path, "utf8"), Buffer.from(b.path, "utf8"));
}

async function sha256OfFile(abs: string): Promise<string> {
  // No-follow open: the listing hashes the file at this name, never what a link names.
  const fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
    }
    return hash.digest("hex");
  } finally {
    await fh.close();
  }
}

/** Lists a staged or installed app folder without following any link, reading every file. */
export async function canonicalListing(dir: string, opts: ListingOptions = {}): Promise<ListingResult> {
  const ignored = new Set(opts.ignoreTopLevel ?? []);
  const links: ListingEntry[] = [];
  const files: Array<{ path: string; abs: string; mode: "exec" | "plain" }> = [];
  const stack = [""];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    const abs = rel === "" ? dir : path.join(dir, ...rel.split("/"));
    for (const name of await readdir(abs)) {
      if (isNeverInstalled(name)) continue; // never installed, so never part of what was consented to
      if (rel === "" && ignored.has(name)) continue;
      const childRel = rel === "" ? name : `${rel}/${name}`;
      const childAbs = path.join(abs, name);
      const st = await lstat(childAbs);
      if (st.isSymbolicLink()) links.push({ path: childRel, type: "link", target: await readlink(childAbs) });
      else if (st.isDirectory()) stack.push(childRel);
      else if (st.isFile())
        files.push({ path: childRel, abs: childAbs, mode: (st.mode & 0o111) !== 0 ? "exec" : "plain" });
      else return refuse("bundle_special_file", { path: childRel, kind: "special file" });
    }
  }
  const hashed = await mapInOrder(files, FILES_IN_FLIGHT, async (f): Promise<ListingEntry> => ({
    path: f.path,
    type: "file",
    mode: f.mode,
    sha256: await sha256OfFile(f.abs),
  }));
  const listing = [...links, ...hashed];
  listing.sort(byPathBytes);
  return { ok: true, listing };
}

/**
 * The same listing as canonicalListing of the staged folder, from the hashes staging took of
 * the bytes it wrote (no second read). Staged modes are normalised, so the mode class is the
 * staged file's; staging never stages a never-installed name.
 */
export function listingOfStaged(entries: readonly StagedEntry[]): ListingEntry[] {
  const listing: ListingEntry[] = [];
  for (const e of entries) {
    if (e.type === "link") listing.push({ path: e.path, type: "link", target: e.linkTarget! });
    else if (e.type === "file") {
      if (e.sha256 === undefined) throw new Error(`staged file ${e.path} has no hash`);
      listing.push({ path: e.path, type: "file", mode: (e.mode & 0o111) !== 0 ? "exec" : "plain", sha256: e.sha256 });
    }
  }
  listing.sort(byPathBytes);
  return listing;
}
