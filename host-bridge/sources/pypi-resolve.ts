// Resolves `pypi:<name>==<version>` from the owner's package index (install.pypi_index, the PEP 691
// JSON simple API) and pins its whole closure: for every project one pure-Python wheel, its URL
// and the sha256 the index publishes, checked here against the wheel's own bytes. Dependencies
// come from each wheel's METADATA (Requires-Dist), read from the zip without running anything of
// it. Every fetch goes under the egress address rules (vetted-fetch.ts). What this does not read
// (a wheel with native code, an environment marker other than an extra) is refused, naming it.
import { createHash } from "node:crypto";
import { GatewayError } from "../../kernel/contracts/errors";
import { compareReleases, normalizedProjectName, releaseOf, satisfies } from "./python-versions";
import { vettedFetch } from "./vetted-fetch";
import { consoleScripts, requiresDist, wheelEntryText } from "./wheel-metadata";

const SIMPLE_JSON = "application/vnd.pypi.simple.v1+json";
const MAX_PAGE_BYTES = 16 * 1024 * 1024;
const MAX_WHEEL_BYTES = 64 * 1024 * 1024;
const MAX_WHEELS = 500;
const PROJECT_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

export interface PinnedWheel {
  /** The normalized project name. */
  name: string;
  version: string;
  file: string;
  url: string;
  sha256: string;
  size: number;
  bytes: Buffer;
}

export interface ResolvedPypiProject {
  index: string;
  root: { name: string; version: string };
  /** Every wheel of the closure, sorted by name; the root's first. */
  wheels: PinnedWheel[];
  /** The root wheel's console scripts: name -> `module:function`. */
  consoleScripts: Record<string, string>;
  summary: string | null;
}

export interface PypiResolveOptions {
  index: string;
  name: string;
  version: string;
  resolve?: (host: string) => Promise<string[]>;
}

interface IndexFile {
  filename: string;
  url: string;
  hashes?: Record<string, string>;
  yanked?: unknown;
}

/** A pure-Python wheel's project and version from its file name, or null for any other file. */
function pureWheel(filename: string): { name: string; version: string } | null {
  // The file name becomes a path in the generated app's wheels/: a plain name only.
  if (!/^[A-Za-z0-9._+!-]+\.whl$/.test(filename)) return null;
  const m = /^([A-Za-z0-9._]+)-([^-]+)(-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl$/.exec(filename);
  if (!m) return null;
  const [, dist, version, , python, abi, platform] = m as unknown as string[];
  if (abi !== "none" || platform !== "any" || !python!.split(".").some((tag) => tag === "py3")) return null;
  return { name: normalizedProjectName(dist!), version: version! };
}

/** Reads one Requires-Dist line: the project, its specifier, and whether an extra's marker leaves it out. */
function requirementOf(line: string, by: string): { name: string; specifier: string } | null {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?\s*([^;()]*?)\s*\)?\s*(?:;\s*(.*))?$/.exec(line);
  if (!m) throw new GatewayError("pypi_package_invalid", { vars: { package: by, reason: `it requires '${line}'` } });
  const marker = m[4]?.trim();
  if (marker) {
    // Only what an extra adds is left out: the generated app installs no extra.
    if (/\bextra\s*==/.test(marker)) return null;
    throw new GatewayError("pypi_package_invalid", {
      vars: {
        package: by,
        reason: `it requires ${m[1]} under the environment marker '${marker}', which this version does not evaluate`,
      },
    });
  }
  return { name: normalizedProjectName(m[1]!), specifier: m[3] ?? "" };
}

/** The owner's package index as this resolution reads it: every fetch under the egress address rules. */
interface IndexReader {
  index: string;
  /** The index URL ending in '/', for project pages relative to it. */
  base: string;
  fetchOpts: { source: string; resolve?: (host: string) => Promise<string[]> };
}

/** The files a project's PEP 691 page lists, their URLs made absolute. */
async function indexFilesOf(reader: IndexReader, name: string): Promise<IndexFile[]> {
  const page = new URL(`${name}/`, reader.base).toString();
  const answer = await vettedFetch(page, { ...reader.fetchOpts, maxBytes: MAX_PAGE_BYTES, accept: SIMPLE_JSON });
  if (answer.status === 404) throw new GatewayError("pypi_package_not_found", { vars: { name } });
  if (answer.status !== 200)
    throw new GatewayError("source_unreachable", {
      vars: { source: reader.index, reason: `it answered ${answer.status} for ${name}` },
    });
  let files: unknown;
  try {
    files = (JSON.parse(answer.bytes.toString("utf8")) as { files?: unknown }).files;
  } catch {
    throw new GatewayError("source_unreachable", {
      vars: { source: reader.index, reason: `its page of ${name} is not PEP 691 JSON` },
    });
  }
  if (!Array.isArray(files))
    throw new GatewayError("source_unreachable", {
      vars: { source: reader.index, reason: `its page of ${name} lists no files` },
    });
  return (files as IndexFile[]).map((f) => ({ ...f, url: new URL(String(f.url), page).toString() }));
}

/**
 * The newest pure-Python wheel of `name` that `specifier` allows and that is not yanked; a range
 * never picks a pre-release or any version this does not order. Null when there is none.
 */
function chooseWheel(
  files: IndexFile[],
  name: string,
  specifier: string,
  by: string,
): { file: IndexFile; version: string } | null {
  const candidates = files
    .filter((f) => !f.yanked)
    .map((f) => ({ file: f, wheel: pureWheel(String(f.filename)) }))
    .filter((c) => c.wheel !== null && c.wheel.name === name)
    .filter((c) => {
      const ok = satisfies(c.wheel!.version, specifier);
      if (ok === null)
        throw new GatewayError("pypi_package_invalid", {
          vars: { package: by, reason: `it requires ${name} as '${specifier}', which this version does not read` },
        });
      return ok && (releaseOf(c.wheel!.version) !== null || specifier.trim().startsWith("=="));
    })
    .sort((a, b) => compareReleases(releaseOf(b.wheel!.version) ?? [], releaseOf(a.wheel!.version) ?? []));
  const chosen = candidates[0];
  return chosen ? { file: chosen.file, version: chosen.wheel!.version } : null;
}

/** Pins one project: the wheel chosen, fetched, and its bytes checked against the sha256 the index publishes. */
async function pinWheel(reader: IndexReader, name: string, specifier: string, by: string): Promise<PinnedWheel> {
  const chosen = chooseWheel(await indexFilesOf(reader, name), name, specifier, by);
  if (!chosen) throw new GatewayError("pypi_version_not_found", { vars: { name, range: specifier || "any", by } });
  const { file, version } = chosen;
  const sha256 = file.hashes?.sha256;
  const id = `${name}==${version}`;
  if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256))
    throw new GatewayError("pypi_package_invalid", {
      vars: { package: id, reason: `the index publishes no sha256 for ${file.filename}` },
    });
  const answer = await vettedFetch(file.url, { ...reader.fetchOpts, maxBytes: MAX_WHEEL_BYTES });
  if (answer.status !== 200)
    throw new GatewayError("source_unreachable", {
      vars: { source: new URL(file.url).origin, reason: `it answered ${answer.status} for ${file.filename}` },
    });
  if (createHash("sha256").update(answer.bytes).digest("hex") !== sha256)
    throw new GatewayError("pypi_hash_mismatch", {
      vars: { file: file.filename, sha256 },
      detail: { package: id, file: file.filename },
    });
  return { name, version, file: file.filename, url: file.url, sha256, size: answer.bytes.length, bytes: answer.bytes };
}

/**
 * What a pinned wheel says of itself, read from the zip without running anything of it: its
 * METADATA, and for the root its console scripts and summary.
 */
function readWheelMetadata(
  wheel: PinnedWheel,
  isRoot: boolean,
): { metadata: string; scripts: Record<string, string>; summary: string | null } {
  const id = `${wheel.name}==${wheel.version}`;
  let metadata: string | null;
  let scripts: Record<string, string> = {};
  let summary: string | null = null;
  try {
    metadata = wheelEntryText(wheel.bytes, /^[^/]+\.dist-info\/METADATA$/);
    if (isRoot) {
      scripts = consoleScripts(wheelEntryText(wheel.bytes, /^[^/]+\.dist-info\/entry_points\.txt$/));
      summary = /^Summary:\s*(.*)$/m.exec(metadata ?? "")?.[1]?.trim() || null;
    }
  } catch (error) {
    throw new GatewayError("pypi_package_invalid", {
      vars: { package: id, reason: `its wheel cannot be read (${(error as Error).message})` },
    });
  }
  if (metadata === null)
    throw new GatewayError("pypi_package_invalid", { vars: { package: id, reason: "its wheel has no METADATA" } });
  return { metadata, scripts, summary };
}

/** The newest release of `name` the index has a pure-Python wheel of (no pre-release), or null. */
export async function latestPypiRelease(
  index: string,
  name: string,
  resolve?: (host: string) => Promise<string[]>,
): Promise<string | null> {
  const reader: IndexReader = {
    index,
    base: index.endsWith("/") ? index : `${index}/`,
    fetchOpts: { source: index, ...(resolve ? { resolve } : {}) },
  };
  const project = normalizedProjectName(name);
  return chooseWheel(await indexFilesOf(reader, project), project, "", project)?.version ?? null;
}

/** Resolves and pins `name==version` and everything it requires; refusals are GatewayErrors naming the package. */
export async function resolvePypiClosure(opts: PypiResolveOptions): Promise<ResolvedPypiProject> {
  const reader: IndexReader = {
    index: opts.index,
    base: opts.index.endsWith("/") ? opts.index : `${opts.index}/`,
    fetchOpts: { source: opts.index, ...(opts.resolve ? { resolve: opts.resolve } : {}) },
  };
  const rootName = normalizedProjectName(opts.name);
  if (!PROJECT_NAME.test(opts.name))
    throw new GatewayError("pypi_package_invalid", {
      vars: { package: opts.name, reason: "it is not a project name" },
    });
  const pinned = new Map<string, PinnedWheel>();
  const queue: Array<{ name: string; specifier: string; by: string }> = [
    { name: rootName, specifier: `==${opts.version}`, by: `pypi:${opts.name}==${opts.version}` },
  ];
  let rootScripts: Record<string, string> = {};
  let summary: string | null = null;
  while (queue.length > 0) {
    const next = queue.shift()!;
    const have = pinned.get(next.name);
    if (have) {
      if (satisfies(have.version, next.specifier) !== true)
        throw new GatewayError("pypi_package_invalid", {
          vars: {
            package: next.by,
            reason: `it requires ${next.name} as '${next.specifier}', but ${next.name}==${have.version} is already pinned`,
          },
        });
      continue;
    }
    if (pinned.size >= MAX_WHEELS)
      throw new GatewayError("pypi_package_invalid", {
        vars: { package: `pypi:${opts.name}`, reason: `its closure has more than ${MAX_WHEELS} projects` },
      });
    const wheel = await pinWheel(reader, next.name, next.specifier, next.by);
    pinned.set(next.name, wheel);
    const isRoot = next.name === rootName;
    const read = readWheelMetadata(wheel, isRoot);
    if (isRoot) {
      rootScripts = read.scripts;
      summary = read.summary;
    }
    const id = `${wheel.name}==${wheel.version}`;
    for (const line of requiresDist(read.metadata)) {
      const requirement = requirementOf(line, id);
      if (requirement) queue.push({ ...requirement, by: id });
    }
  }
  const root = pinned.get(rootName)!;
  return {
    index: opts.index,
    root: { name: rootName, version: root.version },
    wheels: [root, ...[...pinned.values()].filter((w) => w !== root).sort((a, b) => (a.name < b.name ? -1 : 1))],
    consoleScripts: rootScripts,
    summary,
  };
}
