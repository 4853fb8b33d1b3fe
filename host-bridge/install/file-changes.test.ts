// What an update changes of an app's files, from real folders: the installed copy as the
// installer leaves it (data/, .app_secret, node_modules/ of its npm packages) against a bundle.
import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalListing, type ListingEntry } from "../digest/canonical-listing";
import { updateFileChanges } from "./file-changes";
import { fileChangesLine } from "../cli/review-text";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "pc-file-changes-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

async function listingOf(dir: string): Promise<ListingEntry[]> {
  const listed = await canonicalListing(dir);
  if (!listed.ok) throw new Error("not listed");
  return listed.listing;
}

const NPM = { npmPackages: { packages: ["left-pad@1.3.0"], note: null } };

describe("updateFileChanges", () => {
  it("lists the added, changed and removed paths, leaving out what the installer made", async () => {
    const apps = tree({
      "app/app.json": "{}",
      "app/server.mjs": "old",
      "app/gone.txt": "x",
      "app/same.txt": "same",
      "app/data/app.db": "rows",
      "app/.app_secret": "s",
      "app/node_modules/left-pad/index.js": "npm made this",
    });
    symlinkSync("same.txt", join(apps, "app", "link"));
    const next = tree({
      "app.json": "{}",
      "server.mjs": "new",
      "same.txt": "same",
      "new/one.txt": "1",
      "tool.sh": "x",
    });
    symlinkSync("app.json", join(next, "link"));
    const changes = await updateFileChanges(apps, "app", NPM, NPM, await listingOf(next));
    expect(changes).toEqual({
      added: ["new/one.txt", "tool.sh"],
      changed: ["link", "server.mjs"],
      removed: ["gone.txt"],
      totals: { added: 2, changed: 2, removed: 1 },
    });
  });

  it("a mode change is a change; an unchanged bundle changes nothing", async () => {
    const apps = tree({ "app/run.sh": "echo", "app/data/x": "y" });
    const next = tree({ "run.sh": "echo" });
    expect((await updateFileChanges(apps, "app", null, {}, await listingOf(next)))?.totals).toEqual({
      added: 0,
      changed: 0,
      removed: 0,
    });
    chmodSync(join(next, "run.sh"), 0o755);
    expect((await updateFileChanges(apps, "app", null, {}, await listingOf(next)))?.changed).toEqual(["run.sh"]);
  });

  it("a bundle's own node_modules/ counts when no npm package is installed into it", async () => {
    const apps = tree({ "app/node_modules/dep/index.js": "a" });
    const next = tree({ "node_modules/dep/index.js": "b" });
    expect((await updateFileChanges(apps, "app", null, {}, await listingOf(next)))?.changed).toEqual([
      "node_modules/dep/index.js",
    ]);
    expect((await updateFileChanges(apps, "app", NPM, NPM, await listingOf(next)))?.changed).toEqual([]);
  });

  it("lists at most 20 paths a kind with the total, each through the text-safety rules", async () => {
    const files: Record<string, string> = { "aa\u202egnp.js": "reads backwards" };
    for (let n = 0; n < 30; n += 1) files[`f-${String(n).padStart(2, "0")}.txt`] = String(n);
    const apps = tree({ "app/app.json": "{}" });
    const changes = (await updateFileChanges(apps, "app", null, {}, await listingOf(tree(files))))!;
    expect(changes.added).toHaveLength(20);
    expect(changes.totals.added).toBe(31);
    expect(changes.added[0]).toBe("aa\\u202egnp.js");
    expect(changes.removed).toEqual(["app.json"]);
    const line = fileChangesLine(changes);
    expect(line).toMatch(
      /^ {2}Files: adds aa\\u202egnp\.js, f-00\.txt, .*, f-18\.txt and 11 more; removes app\.json\n$/,
    );
    expect(line).not.toContain("\u202e");
  });

  it("answers null when the installed folder cannot be listed", async () => {
    expect(await updateFileChanges(tree({}), "missing", null, {}, [])).toBeNull();
    expect(fileChangesLine(undefined)).toBe("");
  });
});
