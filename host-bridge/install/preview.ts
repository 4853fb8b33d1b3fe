// Install preview (INST-12): stage the bundle into quarantine, read its manifest from the
// staged copy, validate it, scan the staged bytes, build the review and the consent digest.
// Every gate reads the one staged copy, so scanned == reviewed == digested bytes: the scan takes
// each file from exactly the bytes staging wrote into it (reading back only a file too large to
// be shown), and the listing's hashes are of those same bytes (canonicalListing can recompute
// the same listing from the folder). The copy is removed
// before returning unless the caller (install) keeps it; on any refusal it is removed.
import { constants } from "node:fs";
import { open, rm } from "node:fs/promises";
import path from "node:path";
import { uiFolderOf, validateManifest, type AppManifest } from "../../workers/contracts/manifest";
import { parseStrictJson } from "../../workers/contracts/strict-json";
import type { StagedEntry } from "../staging/stage-bundle";
import { parkedDataOf } from "./parked-data";
import { listingOfStaged, type ListingEntry } from "../digest/canonical-listing";
import { consentDigest } from "../digest/consent-digest";
import { scanStaged, type ScanOptions } from "../scan/scan-staged";
import { scanAsStaged } from "../scan/scan-as-staged";
import { refuse, type Refusal } from "../staging/refusal";
import { stageBundle, type StageOptions } from "../staging/stage-bundle";
import { buildReview } from "./review";
import type { InstallReview } from "../../workers/contracts/install-review";

// A manifest is a few KiB; a larger one is refused rather than parsed.
const MAX_MANIFEST_BYTES = 1024 * 1024;

export interface PreviewOptions {
  quarantineRoot: string;
  reservedNames: ReadonlySet<string>;
  core: { version: string; features: readonly string[] };
  /** The install hook's time cap the review states and install applies (default 60 s). */
  hookTimeoutSeconds?: number;
  /** True only for the package's own native folder. */
  fromNativeFolder?: boolean;
  /** The apps folder whose parked data the review shows; none for an offline preview. */
  appsDir?: string;
  /** Keep the staged copy for the install step (install); the preview itself removes it. */
  keepStaged?: boolean;
  stage?: StageOptions;
  scan?: ScanOptions;
}

export type PreviewResult =
  | {
      ok: true;
      manifest: AppManifest;
      review: InstallReview;
      digest: string;
      listing: ListingEntry[];
      /** Present only with keepStaged: the quarantine copy the digest describes. */
      stagedDir?: string;
      stagedId?: string;
    }
  | Refusal;

type ManifestRead = { ok: true; raw: unknown } | Refusal;

/** Reads app.json from the staged copy with a no-follow open; a link there is not a manifest. */
async function readStagedManifest(stagedDir: string): Promise<ManifestRead> {
  let fh;
  try {
    fh = await open(path.join(stagedDir, "app.json"), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return refuse("manifest_missing", { path: "app.json" });
    return refuse(
      "manifest_invalid",
      {
        path: "app.json",
        field: "app.json",
        reason: code === "ELOOP" ? "app.json is a link" : `it cannot be opened (${code})`,
      },
      { field: "app.json" },
    );
  }
  try {
    const st = await fh.stat();
    if (!st.isFile())
      return refuse(
        "manifest_invalid",
        { path: "app.json", field: "app.json", reason: "app.json is not a file" },
        { field: "app.json" },
      );
    if (st.size > MAX_MANIFEST_BYTES)
      return refuse(
        "manifest_invalid",
        { path: "app.json", field: "app.json", reason: `app.json is larger than ${MAX_MANIFEST_BYTES} bytes` },
        { field: "app.json" },
      );
    const text = await fh.readFile("utf8");
    // The same strict reader as request bodies: the scanner, the review and the installer must
    // never read different values from one manifest (issue 11 item 7).
    const parsed = parseStrictJson(text);
    if (parsed.ok) return { ok: true, raw: parsed.value };
    if (parsed.problem === "duplicate_key" || parsed.problem === "forbidden_key") {
      return refuse(
        "manifest_key_refused",
        { path: "app.json", key: parsed.key!, reason: parsed.reason },
        { field: parsed.key!, detail: { key: parsed.key, problem: parsed.problem } },
      );
    }
    return refuse(
      "manifest_invalid",
      { path: "app.json", field: "app.json", reason: parsed.problem === "too_deep" ? parsed.reason : "it is not JSON" },
      { field: "app.json" },
    );
  } finally {
    await fh.close();
  }
}

/**
 * Rules on the staged tree that need the manifest (issue 11 items 2 and 3): pip gets wheels
 * only, so anything in wheels/ that is not a .whl (a source archive pip would build by running
 * the bundle's own build backend) is refused; and the UI folder holds plain files only, since
 * its files are served to the browser and a link there could later be aimed anywhere.
 */
export function checkBundleRules(entries: readonly StagedEntry[], manifest: AppManifest): Refusal | null {
  const uiFolder = uiFolderOf(manifest);
  for (const entry of entries) {
    if (entry.path.startsWith("wheels/") && entry.type !== "dir" && !entry.path.endsWith(".whl")) {
      return refuse("bundle_wheel_not_binary", { path: entry.path });
    }
    if (entry.path.startsWith("wheels/") && entry.type === "link")
      return refuse("bundle_wheel_not_binary", { path: entry.path });
    if (uiFolder !== null && entry.type === "link" && entry.path.startsWith(uiFolder)) {
      return refuse("bundle_link_in_ui", { path: entry.path }, { field: "ui.entry" });
    }
  }
  return null;
}

/** Stages, validates, scans and reviews a bundle; a 'dangerous' verdict is a refusal. */
export async function previewBundle(source: string, opts: PreviewOptions): Promise<PreviewResult> {
  const asStaged = scanAsStaged(opts.scan);
  const staged = await stageBundle(source, opts.quarantineRoot, { ...opts.stage, onFileStaged: asStaged.onFileStaged });
  if (!staged.ok) return staged;

  let keep = false;
  try {
    const read = await readStagedManifest(staged.dir);
    if (!read.ok) return read;

    const validated = validateManifest(read.raw, {
      reservedNames: opts.reservedNames,
      fromNativeFolder: opts.fromNativeFolder === true,
      core: opts.core,
    });
    if (!validated.ok) {
      return {
        ok: false,
        code: validated.code,
        message: validated.message,
        path: "app.json",
        field: validated.field,
        ...(validated.detail ? { detail: validated.detail } : {}),
      };
    }
    const manifest = validated.manifest;

    const bundleRule = checkBundleRules(staged.entries, manifest);
    if (bundleRule) return bundleRule;

    const scan = await scanStaged(staged.dir, staged.entries, manifest, {
      ...opts.scan,
      scanned: asStaged.scanned,
    });
    if (scan.verdict === "dangerous") {
      const runtime = scan.findings.filter((f) => f.runs && f.severity === "dangerous");
      const first = runtime[0];
      return refuse("scan_dangerous", first ? { path: first.path } : {}, {
        detail: { verdict: scan.verdict, findings: scan.findings },
      });
    }

    const parked = opts.appsDir !== undefined ? await parkedDataOf(opts.appsDir, manifest.name) : null;
    const review = buildReview(manifest, scan, opts.hookTimeoutSeconds, parked);
    const listing = listingOfStaged(staged.entries);
    const digest = consentDigest(listing, review as unknown as Record<string, unknown>);

    keep = opts.keepStaged === true;
    const result: PreviewResult = { ok: true, manifest, review, digest, listing };
    if (keep) {
      result.stagedDir = staged.dir;
      result.stagedId = staged.id;
    }
    return result;
  } finally {
    if (!keep) await rm(staged.dir, { recursive: true, force: true });
  }
}
