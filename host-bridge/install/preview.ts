// Install preview (INST-12): read the bundle once (staged into quarantine for install, read in
// place under the same checks for a review that keeps no copy), read its manifest, validate
// it, scan the bytes, build the review and the consent digest. Every gate reads the one read,
// so scanned == reviewed == digested bytes: the manifest and the scan take each file from
// exactly the bytes staging read and wrote (a staged copy reads back only a file too large to be
// shown), and the listing's hashes are of those same bytes (canonicalListing can recompute the
// same listing from a staged folder). Install stages its own copy and proceeds only if its
// digest is the one consented to; a staged copy not kept, or any refusal, is removed.
import { rm } from "node:fs/promises";
import { uiFolderOf, validateManifest, type AppManifest } from "../../kernel/contracts/manifest";
import { parseStrictJson } from "../../kernel/text/strict-json";
import type { StagedEntry } from "../staging/stage-bundle";
import { parkedDataOf } from "./parked-data";
import { listingOfStaged, type ListingEntry } from "../digest/canonical-listing";
import { consentDigest } from "../digest/consent-digest";
import { scanStaged, type ScanOptions } from "../scan/scan-staged";
import { scanAsStaged } from "../scan/scan-as-staged";
import { refuse, type Refusal } from "../staging/refusal";
import {
  readBundle,
  SHOWN_UP_TO_BYTES,
  stageBundle,
  type ReadResult,
  type StageOptions,
} from "../staging/stage-bundle";
import { buildReview } from "./review";
import { closureOfStaged } from "./npm-closure-file";
import { NPM_CLOSURE_FILE } from "../../kernel/contracts/npm-closure";
import { MCP_REGISTRY_ENTRY_FILE } from "../../kernel/contracts/mcp-registry";
import { isGeneratedSourceFolder, registryEntryOfStaged } from "./registry-entry-file";
import { manifestAddressRefusal } from "../egress/manifest-addresses";
import { MCPB_BUNDLE_FILE } from "../../kernel/contracts/mcpb-bundle";
import { mcpbBundleOfStaged } from "./mcpb-bundle-file";
import { pypiClosureOfStaged } from "./pypi-closure-file";
import { PYPI_CLOSURE_FILE } from "../sources/pypi-app";
import type { InstallReview } from "../../kernel/contracts/install-review";

// A manifest is a few KiB; a larger one is refused rather than parsed (staging shows it whole).
const MAX_MANIFEST_BYTES = SHOWN_UP_TO_BYTES;
const MANIFEST_PATH = "app.json";

export interface PreviewOptions {
  /** Where install's copy is staged (keepStaged); a preview that keeps none writes nothing there. */
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

/**
 * Reads app.json from the bytes staging read (and wrote) for it; a link or a folder there is
 * not a manifest. The same strict reader as request bodies: the scanner, the review and the
 * installer must never read different values from one manifest (issue 11 item 7).
 */
function manifestOf(entries: readonly StagedEntry[], bytes: Buffer | undefined): ManifestRead {
  const entry = entries.find((e) => e.path === MANIFEST_PATH);
  const invalid = (reason: string) =>
    refuse("manifest_invalid", { path: MANIFEST_PATH, field: MANIFEST_PATH, reason }, { field: MANIFEST_PATH });
  if (entry === undefined) return refuse("manifest_missing", { path: MANIFEST_PATH });
  if (entry.type === "link") return invalid("app.json is a link");
  if (entry.type !== "file") return invalid("app.json is not a file");
  if (entry.size > MAX_MANIFEST_BYTES) return invalid(`app.json is larger than ${MAX_MANIFEST_BYTES} bytes`);
  // Staging shows every file of this size; a manifest it did not show was never read.
  if (bytes === undefined) throw new Error("app.json was staged without being shown");
  const parsed = parseStrictJson(bytes.toString("utf8"));
  if (parsed.ok) return { ok: true, raw: parsed.value };
  if (parsed.problem === "duplicate_key" || parsed.problem === "forbidden_key") {
    return refuse(
      "manifest_key_refused",
      { path: MANIFEST_PATH, key: parsed.key!, reason: parsed.reason },
      { field: parsed.key!, detail: { key: parsed.key, problem: parsed.problem } },
    );
  }
  return invalid(parsed.problem === "too_deep" ? parsed.reason : "it is not JSON");
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

/**
 * Stages, validates, scans and reviews a bundle; a 'dangerous' verdict is a refusal. Only with
 * keepStaged (install) is a copy written: a review that keeps none reads the bundle under the
 * same checks (readBundle) and takes every file it scans whole from that one read.
 */
export async function previewBundle(source: string, opts: PreviewOptions): Promise<PreviewResult> {
  const asStaged = scanAsStaged(opts.scan);
  let manifestBytes: Buffer | undefined;
  let closureBytes: Buffer | undefined;
  let mcpbBundleBytes: Buffer | undefined;
  let registryEntryBytes: Buffer | undefined;
  let pypiClosureBytes: Buffer | undefined;
  const stage: StageOptions = {
    ...opts.stage,
    onFileStaged: (entry, bytes) => {
      if (entry.path === MANIFEST_PATH) manifestBytes = bytes;
      if (entry.path === NPM_CLOSURE_FILE) closureBytes = bytes;
      if (entry.path === MCPB_BUNDLE_FILE) mcpbBundleBytes = bytes;
      if (entry.path === MCP_REGISTRY_ENTRY_FILE) registryEntryBytes = bytes;
      if (entry.path === PYPI_CLOSURE_FILE) pypiClosureBytes = bytes;
      asStaged.onFileStaged(entry, bytes);
    },
  };
  const keep = opts.keepStaged === true;
  let copy: { dir: string; id: string } | null = null;
  let staged: ReadResult;
  if (keep) {
    const written = await stageBundle(source, opts.quarantineRoot, stage);
    if (written.ok) copy = { dir: written.dir, id: written.id };
    staged = written;
  } else staged = await readBundle(source, { ...stage, showUpToBytes: asStaged.wholeUpTo });
  if (!staged.ok) return staged;
  const stagedDir = copy?.dir ?? null;

  let kept = false;
  try {
    const read = manifestOf(staged.entries, manifestBytes);
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
        path: MANIFEST_PATH,
        field: validated.field,
        ...(validated.detail ? { detail: validated.detail } : {}),
      };
    }
    const manifest = validated.manifest;

    const bundleRule = checkBundleRules(staged.entries, manifest);
    if (bundleRule) return bundleRule;
    const addressRule = manifestAddressRefusal(manifest);
    if (addressRule) return addressRule;
    // A declared closure is read from the same bytes the digest covers; one that does not parse is refused here.
    const closure = manifest.dependencies?.npmClosure === true ? closureOfStaged(staged.entries, closureBytes) : null;
    if (closure !== null && !closure.ok) return closure;
    // Where an app `apps add registry:` generated came from; no other folder can claim a registry.
    const registryEntry = isGeneratedSourceFolder(source, opts.quarantineRoot)
      ? registryEntryOfStaged(staged.entries, registryEntryBytes)
      : null;
    if (registryEntry !== null && !registryEntry.ok) return registryEntry;

    const scan = await scanStaged(stagedDir, staged.entries, manifest, {
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
    const review = buildReview(
      manifest,
      scan,
      opts.hookTimeoutSeconds,
      parked,
      closure?.closure ?? null,
      registryEntry?.origin ?? null,
    );
    // The .mcpb bundle a generated app came from: its pinned sha256 and what it claims are shown and digested.
    const bundleRecord = mcpbBundleOfStaged(source, opts.quarantineRoot, staged.entries, mcpbBundleBytes);
    if (bundleRecord !== null && !bundleRecord.ok) return bundleRecord;
    if (bundleRecord !== null) review.mcpbBundle = bundleRecord.record;
    // The PyPI closure a generated app pins: how many wheels, their size, which are not pure Python.
    const pypiClosure = pypiClosureOfStaged(source, opts.quarantineRoot, staged.entries, pypiClosureBytes);
    if (pypiClosure !== null) review.pypiClosure = pypiClosure;
    const listing = listingOfStaged(staged.entries);
    const digest = consentDigest(listing, review as unknown as Record<string, unknown>);

    const result: PreviewResult = { ok: true, manifest, review, digest, listing };
    if (copy !== null) {
      result.stagedDir = copy.dir;
      result.stagedId = copy.id;
      kept = true;
    }
    return result;
  } finally {
    if (stagedDir !== null && !kept) await rm(stagedDir, { recursive: true, force: true });
  }
}
