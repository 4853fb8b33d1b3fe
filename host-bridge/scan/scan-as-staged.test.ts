// Scanning each file from the bytes staging wrote gives the very scan that reading the staged
// folder back gives, for every scan fixture; only a file too large to be shown is read back.
import { createHash } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeSandbox, type Sandbox } from "../../test/fixtures/hostile/sandbox";
import { validateManifest, type AppManifest } from "../../kernel/contracts/manifest";
import { SHOWN_UP_TO_BYTES, stageBundle, type StagedEntry } from "../staging/stage-bundle";
import { scanAsStaged } from "./scan-as-staged";
import { scanStaged, type ScanOptions } from "./scan-staged";

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.cleanup();
});

async function manifestOf(dir: string): Promise<AppManifest> {
  const v = validateManifest(JSON.parse(await readFile(path.join(dir, "app.json"), "utf8")), {
    reservedNames: new Set(),
    fromNativeFolder: false,
    core: { version: "1.0.0", features: [] },
  });
  if (!v.ok) throw new Error(`manifest refused: ${v.code}`);
  return v.manifest as AppManifest;
}

/** Stages the fixture twice: scanned as staged, and scanned by reading the staged folder back. */
async function bothWays(fixture: string, opts: ScanOptions = {}, prepare?: (bundle: string) => Promise<void>) {
  const sb = await makeSandbox(fixture);
  sandboxes.push(sb);
  await prepare?.(sb.bundle);
  const asStaged = scanAsStaged(opts);
  const shown = await stageBundle(sb.bundle, sb.quarantine, { onFileStaged: asStaged.onFileStaged });
  const readBack = await stageBundle(sb.bundle, sb.quarantine);
  if (!shown.ok || !readBack.ok) throw new Error("staging failed");
  const manifest = await manifestOf(readBack.dir);
  return {
    shown,
    scanned: asStaged.scanned,
    fromBytes: await scanStaged(shown.dir, shown.entries, manifest, { ...opts, scanned: asStaged.scanned }),
    fromFolder: await scanStaged(readBack.dir, readBack.entries, manifest, opts),
  };
}

describe("scanAsStaged", () => {
  it.each([
    "scan-clean-ok",
    "scan-credentials",
    "scan-destructive-runtime",
    "scan-destructive-test-only",
    "scan-download-exec",
    "scan-embedded-git",
    "scan-node-modules-import",
    "scan-npm-lifecycle",
    "scan-pip-overrides",
    "scan-planted-config",
    "scan-test-helper-imported",
  ])("%s: the same verdict and findings as reading the staged folder back", async (fixture) => {
    const { fromBytes, fromFolder, scanned, shown } = await bothWays(fixture);
    expect(fromBytes).toEqual(fromFolder);
    expect([...scanned.keys()].sort()).toEqual(
      shown.entries
        .filter((e) => e.type === "file")
        .map((e) => e.path)
        .sort(),
    );
  });

  it("scans the bytes staging wrote, not the staged file read back later", async () => {
    const sb = await makeSandbox("scan-destructive-runtime");
    sandboxes.push(sb);
    const asStaged = scanAsStaged();
    const staged = await stageBundle(sb.bundle, sb.quarantine, { onFileStaged: asStaged.onFileStaged });
    if (!staged.ok) throw new Error("staging failed");
    await writeFile(path.join(staged.dir, "lib", "tools.py"), "print('rewritten after the scan saw it')\n");
    const r = await scanStaged(staged.dir, staged.entries, await manifestOf(staged.dir), { scanned: asStaged.scanned });
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "destructive-rm-root", path: "lib/tools.py", line: 4 }),
    );
  });

  it("leaves a file larger than the scan reads whole to the scan, which reports it unscanned", async () => {
    const { fromBytes, fromFolder, scanned } = await bothWays("scan-clean-ok", { maxFileBytes: 64 }, (bundle) =>
      writeFile(path.join(bundle, "big.txt"), "x".repeat(65)),
    );
    expect(scanned.has("big.txt")).toBe(false);
    expect(fromBytes).toEqual(fromFolder);
    expect(fromBytes.findings).toContainEqual(expect.objectContaining({ rule: "unscanned_file", path: "big.txt" }));
  });
});

describe("stageBundle onFileStaged", () => {
  it("shows each file up to the bound with exactly its staged bytes, and none larger", async () => {
    const sb = await makeSandbox("scan-clean-ok");
    sandboxes.push(sb);
    await writeFile(path.join(sb.bundle, "empty.txt"), "");
    await writeFile(path.join(sb.bundle, "at-bound.bin"), Buffer.alloc(SHOWN_UP_TO_BYTES, 7));
    await writeFile(path.join(sb.bundle, "past-bound.bin"), Buffer.alloc(SHOWN_UP_TO_BYTES + 1, 9));
    const shown = new Map<string, Buffer>();
    const staged = await stageBundle(sb.bundle, sb.quarantine, {
      onFileStaged: (entry: StagedEntry, bytes) => shown.set(entry.path, Buffer.from(bytes)),
    });
    if (!staged.ok) throw new Error("staging failed");
    for (const entry of staged.entries.filter((e) => e.type === "file")) {
      const onDisk = await readFile(path.join(staged.dir, entry.path));
      expect(createHash("sha256").update(onDisk).digest("hex")).toBe(entry.sha256);
      if (entry.size > SHOWN_UP_TO_BYTES) expect(shown.has(entry.path)).toBe(false);
      else expect(shown.get(entry.path)?.equals(onDisk)).toBe(true);
    }
    expect(shown.get("empty.txt")?.length).toBe(0);
    expect(shown.has("at-bound.bin")).toBe(true);
    expect(shown.has("past-bound.bin")).toBe(false);
  });

  it("a throw from it fails the staging, and the partial copy is removed", async () => {
    const sb = await makeSandbox("scan-clean-ok");
    sandboxes.push(sb);
    const before = await readFile(path.join(sb.bundle, "app.json"));
    await expect(
      stageBundle(sb.bundle, sb.quarantine, {
        onFileStaged: () => {
          throw new Error("refused by the reader");
        },
      }),
    ).rejects.toThrow("refused by the reader");
    expect(await readdir(sb.quarantine)).toEqual([]);
    expect(await readFile(path.join(sb.bundle, "app.json"))).toEqual(before);
  });
});
