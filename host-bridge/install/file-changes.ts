// What an update changes of an app's files: the previewed bundle's listing against the installed
// folder's, by path. What the installer itself adds to the folder (data/, .app_secret, and the
// node_modules/ it installs npm packages into) is no file of the bundle and is left out of both.
// Paths are third-party text: each is written through the text-safety rules before it is shown.
import { join } from "node:path";
import { FILE_CHANGES_LISTED, type FileChanges } from "../../kernel/contracts/install-review";
import { safeLine } from "../../kernel/text/text-safety";
import { canonicalListing, type ListingEntry } from "../digest/canonical-listing";

/** A review (the consented one may predate today's schema) that has npm install packages into node_modules/. */
function installsNpm(review: Record<string, unknown> | null): boolean {
  const npm = review?.npmPackages as { packages?: unknown } | undefined;
  return (Array.isArray(npm?.packages) && npm.packages.length > 0) || Boolean(review?.npmClosure);
}

function sameEntry(a: ListingEntry, b: ListingEntry): boolean {
  if (a.type === "link") return b.type === "link" && a.target === b.target;
  return b.type === "file" && a.sha256 === b.sha256 && a.mode === b.mode;
}

/** The first FILE_CHANGES_LISTED paths, each made safe to show. */
function shown(paths: readonly string[]): string[] {
  return paths.slice(0, FILE_CHANGES_LISTED).map((path) => safeLine(path));
}

/**
 * The files an update adds, changes and removes: `next` is the previewed bundle's listing, the
 * installed copy is read from apps/<name> (both reviews say whether npm made node_modules/).
 * Null when the installed folder cannot be listed.
 */
export async function updateFileChanges(
  appsDir: string,
  name: string,
  installedReview: Record<string, unknown> | null,
  nextReview: Record<string, unknown>,
  nextListing: readonly ListingEntry[],
): Promise<FileChanges | null> {
  const npm = installsNpm(installedReview) || installsNpm(nextReview);
  const left = new Set(["data", ".app_secret", ...(npm ? ["node_modules"] : [])]);
  const keep = (entry: ListingEntry) => !left.has(entry.path.split("/")[0]!);
  const listed = await canonicalListing(join(appsDir, name), { ignoreTopLevel: [...left] }).catch(() => null);
  if (!listed?.ok) return null;
  const before = new Map(listed.listing.filter(keep).map((entry) => [entry.path, entry]));
  const added: string[] = [];
  const changed: string[] = [];
  for (const entry of nextListing.filter(keep)) {
    const old = before.get(entry.path);
    if (!old) added.push(entry.path);
    else if (!sameEntry(old, entry)) changed.push(entry.path);
    before.delete(entry.path);
  }
  const removed = [...before.keys()];
  return {
    added: shown(added),
    changed: shown(changed),
    removed: shown(removed),
    totals: { added: added.length, changed: changed.length, removed: removed.length },
  };
}
