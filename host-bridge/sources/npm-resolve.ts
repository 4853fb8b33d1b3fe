// Resolves an npm package at an exact version and its whole dependency closure from the owner's
// npm source, and pins every package: its place in node_modules, its tarball URL and its sha512
// integrity, checked here against the tarball's own bytes. Only metadata and tarball bytes are
// read; nothing of any package runs on the host (the installer later fetches the same tarballs
// again, confined, and npm refuses any byte that differs from the pin).
//
// Ranges are matched by npm's own semver, preferring the `latest` tag when it satisfies (as npm
// does). Placement: a dependency is reused where Node's resolution would find it already (the
// nearest node_modules up the path holding the name, if its version satisfies), hoisted to the
// top when no package of that name is there yet, and otherwise nested under the package that
// needs it, where only that package and its own dependencies see it. An alias
// (`"string-width-cjs": "npm:string-width@^4.2.0"`) places the named package under the alias's
// folder, as npm does; a peer dependency npm would install (one not marked optional) is placed
// like a dependency, where the package that names it finds it.
import { createHash } from "node:crypto";
import semver from "semver";
import { GatewayError } from "../../kernel/contracts/errors";
import type { NpmClosure, PinnedNpmPackage } from "../../kernel/contracts/npm-closure";
import { NpmClosureSchema, NpmPackageNameSchema } from "../../kernel/contracts/npm-closure";
import { vettedFetch, type VettedFetchOptions } from "./vetted-fetch";

/** A packument larger than this is refused (the abbreviated form of the largest packages is a few MiB). */
const MAX_PACKUMENT_BYTES = 64 * 1024 * 1024;
const MAX_TARBALL_BYTES = 256 * 1024 * 1024;
const MAX_PACKAGES = 5000;
const TARBALLS_IN_FLIGHT = 6;
// npm's abbreviated metadata: what an install needs, a fraction of the full document.
const PACKUMENT_ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*";

interface VersionMeta {
  name?: unknown;
  version?: unknown;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: unknown }>;
  bin?: unknown;
  license?: unknown;
  description?: unknown;
  hasInstallScript?: unknown;
  gypfile?: unknown;
  scripts?: Record<string, unknown>;
  dist?: { tarball?: unknown; integrity?: unknown };
}

interface Packument {
  "dist-tags"?: Record<string, string>;
  versions?: Record<string, VersionMeta>;
}

export interface ResolveOptions {
  /** The owner's npm source (install.npm_registry). */
  registry: string;
  name: string;
  version: string;
  resolve?: VettedFetchOptions["resolve"];
}

export interface ResolvedNpmPackage {
  closure: NpmClosure;
  /** The root package's own description, for the generated app's manifest. */
  description: string | null;
}

function registryBase(registry: string): string {
  return registry.endsWith("/") ? registry : `${registry}/`;
}

/** The packument URL of `name`: a scope's slash is escaped, as npm asks for it. */
export function packumentUrl(registry: string, name: string): string {
  return new URL(name.replace("/", "%2f"), registryBase(registry)).toString();
}

/** The sha512 member of an SRI string (npm may list sha1 beside it), or null. */
function sha512Of(integrity: unknown): string | null {
  if (typeof integrity !== "string") return null;
  return integrity.split(/\s+/).find((part) => part.startsWith("sha512-")) ?? null;
}

const describe = (name: string, version?: string) => (version ? `${name}@${version}` : name);

function isNative(meta: VersionMeta): boolean {
  const scripts = meta.scripts ?? {};
  return (
    meta.hasInstallScript === true ||
    meta.gypfile === true ||
    ["preinstall", "install", "postinstall"].some((s) => typeof scripts[s] === "string")
  );
}

function binOf(name: string, bin: unknown): Record<string, string> | undefined {
  if (typeof bin === "string") return { [name.replace(/^@[^/]+\//, "")]: bin };
  if (bin && typeof bin === "object" && !Array.isArray(bin)) {
    const entries = Object.entries(bin as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === "string",
    );
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return undefined;
}

/** The node_modules folders Node searches from a package at `path`, nearest first. */
function searchedFolders(path: string): string[] {
  const folders: string[] = [];
  let at = path;
  for (;;) {
    folders.push(`${at}/node_modules/`);
    const cut = at.lastIndexOf("/node_modules/");
    if (cut < 0) break;
    at = at.slice(0, cut);
  }
  folders.push("node_modules/");
  return folders;
}

/** What a dependency entry asks for: the package (its real name, for an `npm:` alias) and the range. */
function wantedPackage(folder: string, spec: string): { name: string; range: string } {
  const alias = /^npm:((?:@[^/@]+\/)?[^@]+)@(.+)$/.exec(spec) ?? /^npm:((?:@[^/@]+\/)?[^@]+)$/.exec(spec);
  return alias ? { name: alias[1]!, range: alias[2] ?? "*" } : { name: folder, range: spec };
}

/** The dependencies npm installs for a package: its own, its optional ones, and its peers not marked optional. */
function wantedOf(meta: VersionMeta): Array<{ folder: string; spec: string; optional: boolean }> {
  const peers = Object.entries(meta.peerDependencies ?? {}).filter(
    ([name]) => meta.peerDependenciesMeta?.[name]?.optional !== true,
  );
  return [
    ...Object.entries(meta.dependencies ?? {}).map(([folder, spec]) => ({ folder, spec, optional: false })),
    ...peers.map(([folder, spec]) => ({ folder, spec, optional: false })),
    ...Object.entries(meta.optionalDependencies ?? {}).map(([folder, spec]) => ({ folder, spec, optional: true })),
  ];
}

/** One package's metadata from the owner's npm source, under the egress address rules. */
async function fetchPackument(
  registry: string,
  name: string,
  fetchOpts: Omit<VettedFetchOptions, "maxBytes" | "accept">,
): Promise<Packument> {
  const answer = await vettedFetch(packumentUrl(registry, name), {
    ...fetchOpts,
    maxBytes: MAX_PACKUMENT_BYTES,
    accept: PACKUMENT_ACCEPT,
  });
  if (answer.status === 404) throw new GatewayError("npm_package_not_found", { vars: { name } });
  if (answer.status !== 200)
    throw new GatewayError("source_unreachable", {
      vars: { source: registry, reason: `it answered ${answer.status} for ${name}` },
    });
  try {
    return JSON.parse(answer.bytes.toString("utf8")) as Packument;
  } catch {
    throw new GatewayError("source_unreachable", {
      vars: { source: registry, reason: `its metadata of ${name} is not JSON` },
    });
  }
}

/** The version the npm source tags `latest` for `name` (an exact version), or null when it tags none. */
export async function latestNpmVersion(
  registry: string,
  name: string,
  resolve?: VettedFetchOptions["resolve"],
): Promise<string | null> {
  const packument = await fetchPackument(registry, name, { source: registry, ...(resolve ? { resolve } : {}) });
  const latest = packument["dist-tags"]?.latest;
  return typeof latest === "string" && semver.valid(latest) === latest ? latest : null;
}

/** Resolves and pins `name@version` and everything it depends on; refusals are GatewayErrors naming the package. */
export async function resolveNpmClosure(opts: ResolveOptions): Promise<ResolvedNpmPackage> {
  const fetchOpts = { source: opts.registry, ...(opts.resolve ? { resolve: opts.resolve } : {}) };
  const packuments = new Map<string, Promise<Packument>>();
  const packumentOf = (name: string): Promise<Packument> => {
    let known = packuments.get(name);
    if (!known) {
      known = fetchPackument(opts.registry, name, fetchOpts);
      packuments.set(name, known);
    }
    return known;
  };

  const pick = async (name: string, range: string, by: string): Promise<VersionMeta & { version: string }> => {
    if (!NpmPackageNameSchema.safeParse(name).success)
      throw new GatewayError("npm_package_invalid", { vars: { package: name, reason: "it is not an npm name" } });
    if (semver.validRange(range) === null)
      throw new GatewayError("npm_package_invalid", {
        vars: {
          package: by,
          reason: `it depends on ${name} as '${range}', which is not a registry version range (a URL, git or file dependency is not installed)`,
        },
      });
    const packument = await packumentOf(name);
    const versions = Object.keys(packument.versions ?? {});
    const latest = packument["dist-tags"]?.latest;
    const chosen =
      latest !== undefined && versions.includes(latest) && semver.satisfies(latest, range)
        ? latest
        : semver.maxSatisfying(versions, range);
    if (chosen === null) throw new GatewayError("npm_version_not_found", { vars: { name, range, by } });
    return { ...packument.versions![chosen]!, version: chosen };
  };

  const root = await pick(opts.name, opts.version, "the command line");
  const nodes = new Map<string, { meta: VersionMeta & { version: string }; name: string; optional: boolean }>();
  const queue: string[] = [];
  const rootPath = `node_modules/${opts.name}`;
  nodes.set(rootPath, { meta: root, name: opts.name, optional: false });
  queue.push(rootPath);
  while (queue.length > 0) {
    const path = queue.shift()!;
    const node = nodes.get(path)!;
    const by = describe(node.name, node.meta.version);
    const seen = new Set<string>();
    for (const { folder: dependency, spec, optional } of wantedOf(node.meta)) {
      // A name listed twice (a peer it also depends on) is placed once, by its first entry.
      if (seen.has(dependency)) continue;
      seen.add(dependency);
      const { name, range } = wantedPackage(dependency, spec);
      let place: string | null = null;
      let satisfied = false;
      for (const folder of searchedFolders(path)) {
        const found = nodes.get(`${folder}${dependency}`);
        if (!found) continue;
        if (found.name === name && semver.satisfies(found.meta.version, range)) satisfied = true;
        // Another version is what Node would find first from here: this one goes beside the package.
        else place = `${path}/node_modules/${dependency}`;
        break;
      }
      if (satisfied) continue;
      place ??= `node_modules/${dependency}`;
      if (nodes.has(place))
        throw new GatewayError("npm_package_invalid", {
          vars: { package: by, reason: `it needs two versions of ${dependency} in one place` },
        });
      const meta = await pick(name, range, by);
      nodes.set(place, { meta, name, optional: optional || node.optional });
      queue.push(place);
      if (nodes.size > MAX_PACKAGES)
        throw new GatewayError("npm_package_invalid", {
          vars: {
            package: describe(opts.name, root.version),
            reason: `its closure has more than ${MAX_PACKAGES} packages`,
          },
        });
    }
  }

  const placed = [...nodes.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const packages: PinnedNpmPackage[] = new Array(placed.length);
  let next = 0;
  const pinOne = async () => {
    while (next < placed.length) {
      const index = next++;
      const [path, { meta, name, optional }] = placed[index]!;
      packages[index] = await pin(path, name, meta, optional, opts.registry, fetchOpts);
    }
  };
  await Promise.all(Array.from({ length: Math.min(TARBALLS_IN_FLIGHT, placed.length) }, pinOne));

  const closure = NpmClosureSchema.safeParse({
    registry: opts.registry,
    root: { name: opts.name, version: root.version },
    packages,
  });
  if (!closure.success)
    throw new GatewayError("npm_package_invalid", {
      vars: { package: describe(opts.name, root.version), reason: closure.error.issues[0]!.message },
    });
  return { closure: closure.data, description: typeof root.description === "string" ? root.description : null };
}

/** Fetches one tarball and pins it, refusing it when its bytes are not the ones its integrity names. */
async function pin(
  path: string,
  name: string,
  meta: VersionMeta & { version: string },
  optional: boolean,
  registry: string,
  fetchOpts: Pick<VettedFetchOptions, "source" | "resolve">,
): Promise<PinnedNpmPackage> {
  const id = describe(name, meta.version);
  const integrity = sha512Of(meta.dist?.integrity);
  const tarball = meta.dist?.tarball;
  if (integrity === null)
    throw new GatewayError("npm_package_invalid", {
      vars: { package: id, reason: "its metadata has no sha512 integrity" },
    });
  if (typeof tarball !== "string" || !URL.canParse(tarball))
    throw new GatewayError("npm_package_invalid", { vars: { package: id, reason: "its metadata names no tarball" } });
  // Everything comes from the one source the owner named: the installer's grant names only it.
  if (new URL(tarball).origin !== new URL(registry).origin)
    throw new GatewayError("npm_package_invalid", {
      vars: { package: id, reason: `its tarball is on ${new URL(tarball).origin}, not on the npm source ${registry}` },
    });
  const answer = await vettedFetch(tarball, { ...fetchOpts, maxBytes: MAX_TARBALL_BYTES });
  if (answer.status !== 200)
    throw new GatewayError("source_unreachable", {
      vars: { source: registry, reason: `it answered ${answer.status} for the tarball of ${id}` },
    });
  const actual = `sha512-${createHash("sha512").update(answer.bytes).digest("base64")}`;
  if (actual !== integrity)
    throw new GatewayError("npm_integrity_mismatch", {
      vars: { package: id, integrity },
      detail: { package: id, integrity, actual },
    });
  const bin = binOf(name, meta.bin);
  const pinned: PinnedNpmPackage = {
    path,
    name,
    version: meta.version,
    resolved: tarball,
    integrity,
    size: answer.bytes.length,
    native: isNative(meta),
  };
  if (meta.dependencies && Object.keys(meta.dependencies).length > 0) pinned.dependencies = { ...meta.dependencies };
  const peers = Object.entries(meta.peerDependencies ?? {}).filter(
    ([peer]) => meta.peerDependenciesMeta?.[peer]?.optional !== true,
  );
  if (peers.length > 0) pinned.peerDependencies = Object.fromEntries(peers);
  if (!path.endsWith(`node_modules/${name}`)) pinned.alias = true;
  if (meta.optionalDependencies && Object.keys(meta.optionalDependencies).length > 0)
    pinned.optionalDependencies = { ...meta.optionalDependencies };
  if (bin) pinned.bin = bin;
  if (typeof meta.license === "string") pinned.license = meta.license.slice(0, 256);
  if (optional) pinned.optional = true;
  return pinned;
}
