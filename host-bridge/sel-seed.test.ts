// The sealed seed: only the owner's passphrase opens it, and the file never holds the seed in the clear.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freshSeed, sealedSeedPath, sealSeed, unsealSeed } from "./sel-seed";

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});
function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "pc-seed-"));
  homes.push(dir);
  return dir;
}

describe("the sealed seed", () => {
  it("opens with the passphrase it was sealed to, and the file (0600) holds no copy of the seed", () => {
    const dir = home();
    const seed = freshSeed();
    sealSeed(dir, seed, "pass phrase");
    expect(unsealSeed(dir, "pass phrase")).toEqual({ ok: true, seedHex: seed });
    const text = readFileSync(sealedSeedPath(dir));
    expect(text.includes(seed)).toBe(false);
    expect(text.includes(Buffer.from(seed, "hex"))).toBe(false);
    expect(statSync(sealedSeedPath(dir)).mode & 0o777).toBe(0o600);
  });

  it("refuses another passphrase, an edited file and a home that keeps none", () => {
    const dir = home();
    sealSeed(dir, freshSeed(), "right");
    expect(unsealSeed(dir, "wrong")).toEqual({ ok: false, reason: "wrong_passphrase" });
    const record = JSON.parse(readFileSync(sealedSeedPath(dir), "utf8"));
    const sealed = Buffer.from(record.sealed, "base64");
    sealed[0] ^= 1;
    writeFileSync(sealedSeedPath(dir), JSON.stringify({ ...record, sealed: sealed.toString("base64") }));
    expect(unsealSeed(dir, "right")).toEqual({ ok: false, reason: "wrong_passphrase" });
    writeFileSync(sealedSeedPath(dir), "not json");
    expect(unsealSeed(dir, "right")).toEqual({ ok: false, reason: "unreadable" });
    expect(unsealSeed(home(), "right")).toEqual({ ok: false, reason: "not_kept" });
  });
});
