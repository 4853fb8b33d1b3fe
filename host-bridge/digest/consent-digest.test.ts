import { chmod, mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../kernel/crypto/canonical-json";
import { canonicalListing } from "./canonical-listing";
import { consentDigest } from "./consent-digest";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "pc-digest-"));
  dirs.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
  return dir;
}

async function listing(dir: string) {
  const r = await canonicalListing(dir);
  if (!r.ok) throw new Error(r.code);
  return r.listing;
}

describe("canonical listing and consent digest", () => {
  it("lists files and links sorted by path bytes with mode class and hashes", async () => {
    const dir = await tree({ "b.txt": "b", "B.txt": "B", "a/z.js": "z", "é.txt": "e" });
    await chmod(path.join(dir, "a/z.js"), 0o755);
    await symlink("b.txt", path.join(dir, "link"));
    const l = await listing(dir);
    expect(l.map((e) => e.path)).toEqual(["B.txt", "a/z.js", "b.txt", "link", "é.txt"]);
    expect(l[1]).toMatchObject({ type: "file", mode: "exec" });
    expect(l[2]).toMatchObject({
      type: "file",
      mode: "plain",
      sha256: "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
    });
    expect(l[3]).toEqual({ path: "link", type: "link", target: "b.txt" });
  });

  it("the same tree in two places has the same digest", async () => {
    const files = { "app.json": "{}", "src/main.py": "print(1)\n" };
    const review = { verdict: "clean" };
    expect(consentDigest(await listing(await tree(files)), review)).toBe(
      consentDigest(await listing(await tree(files)), review),
    );
  });

  it("one changed byte, a changed mode class or a changed review changes the digest", async () => {
    const dir = await tree({ "main.py": "print(1)\n" });
    const review = { verdict: "clean" };
    const original = consentDigest(await listing(dir), review);
    await writeFile(path.join(dir, "main.py"), "print(2)\n");
    const byteChanged = consentDigest(await listing(dir), review);
    expect(byteChanged).not.toBe(original);
    await chmod(path.join(dir, "main.py"), 0o755);
    expect(consentDigest(await listing(dir), review)).not.toBe(byteChanged);
    expect(consentDigest(await listing(dir), { verdict: "warning" })).not.toBe(
      consentDigest(await listing(dir), review),
    );
  });

  it("the review's own digest field and key order do not change the digest", async () => {
    const l = await listing(await tree({ a: "a" }));
    expect(consentDigest(l, { a: 1, b: [1, 2], digest: "sha256:old" })).toBe(consentDigest(l, { b: [1, 2], a: 1 }));
  });

  it("the listing of an installed tree leaves out never-installed folders and the installer's own top-level names", async () => {
    const staged = await tree({ "main.py": "x" });
    const installed = await tree({ "main.py": "x", ".git/HEAD": "ref", "data/state.db": "s", "installed.json": "{}" });
    const r = await canonicalListing(installed, { ignoreTopLevel: ["data", "installed.json"] });
    if (!r.ok) throw new Error(r.code);
    expect(r.listing).toEqual(await listing(staged));
  });

  it("canonicalJson sorts keys and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: [true, null] } })).toBe('{"a":{"c":[true,null]},"b":1}');
  });
});
