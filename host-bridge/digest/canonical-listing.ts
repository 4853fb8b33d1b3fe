// The canonical listing of an app tree: every file and link, sorted by path bytes, with its
// mode class, link target and content hash. The same function lists the staged copy and the
// installed folder, so "installed bytes == consented bytes" is one equality of listings.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { isNeverInstalled } from "../staging/never-installed";
import { refuse, type Refusal } from "../staging/refusal";

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

/** Lists a staged or installed app folder without following any link. */
export async function canonicalListing(dir: string, opts: ListingOptions = {}): Promise<ListingResult> {
  const ignored = new Set(opts.ignoreTopLevel ?? []);
  const listing: ListingEntry[] = [];
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
      if (st.isSymbolicLink()) listing.push({ path: childRel, type: "link", target: await readlink(childAbs) });
      else if (st.isDirectory()) stack.push(childRel);
      else if (st.isFile()) {
        listing.push({ path: childRel, type: "file", mode: (st.mode & 0o111) !== 0 ? "exec" : "plain", sha256: await sha256OfFile(childAbs) });
      } else return refuse("bundle_special_file", { path: childRel, kind: "special file" });
    }
  }
  listing.sort(byPathBytes);
  return { ok: true, listing };
}

/** Recomputes the listing of an installed app folder, for comparison with the consented one. */
export function hashInstalledTree(dir: string, opts: ListingOptions = {}): Promise<ListingResult> {
  return canonicalListing(dir, opts);
}
