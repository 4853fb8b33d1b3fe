// An app's pinned npm closure: the file `npm-closure.json` an app generated from an npm package
// ships (host-bridge/sources/npm-app.ts writes it), the review reads and the confined installer
// installs with `npm ci` exactness. Every package is named with its place in node_modules, the
// URL it is fetched from and its sha512 integrity, so the consent digest, which covers this
// file's bytes, covers the bytes of every package. Imports nothing but zod.
import { z } from "zod";

/** The file an app declaring `dependencies.npmClosure` ships at its root. */
export const NPM_CLOSURE_FILE = "npm-closure.json";

// npm's own name rule (lower case, url-safe, an optional @scope/), which also keeps a name
// from naming a path: no `..`, no leading dot, no backslash.
const NPM_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** A place in node_modules: `node_modules/a` or `node_modules/a/node_modules/@s/b`. */
const NODE_MODULES_PATH =
  /^node_modules\/(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(\/node_modules\/(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*)*$/;
const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
/** Only sha512: the weaker sha1 older packuments carry is not a pin. */
const SHA512_INTEGRITY = /^sha512-[A-Za-z0-9+/]{86}==$/;

export const NpmPackageNameSchema = z.string().max(214).regex(NPM_NAME);
export const NpmExactVersionSchema = z.string().max(256).regex(EXACT_VERSION);

const RangeMapSchema = z.record(NpmPackageNameSchema, z.string().max(256));

export const PinnedNpmPackageSchema = z
  .object({
    path: z.string().max(4096).regex(NODE_MODULES_PATH),
    name: NpmPackageNameSchema,
    version: NpmExactVersionSchema,
    /** The tarball, on the closure's registry. */
    resolved: z.string().url().max(2048),
    integrity: z.string().regex(SHA512_INTEGRITY),
    /** The tarball's size in bytes, as fetched and checked when the closure was resolved. */
    size: z.number().int().nonnegative(),
    dependencies: RangeMapSchema.optional(),
    optionalDependencies: RangeMapSchema.optional(),
    /** The peers npm installs for it (those not marked optional), placed where it finds them. */
    peerDependencies: RangeMapSchema.optional(),
    /** Its folder is an alias's name (`"string-width-cjs": "npm:string-width@^4"`), not its own. */
    alias: z.literal(true).optional(),
    bin: z.record(z.string().max(214), z.string().max(1024)).optional(),
    license: z.string().max(256).optional(),
    /** npm's word for a package npm ci may skip when it does not fit this platform. */
    optional: z.literal(true).optional(),
    /** It declares install scripts (never run: --ignore-scripts) or ships a native addon build file. */
    native: z.boolean(),
  })
  .strict();
export type PinnedNpmPackage = z.infer<typeof PinnedNpmPackageSchema>;

export const NpmClosureSchema = z
  .object({
    /** The owner's npm source it was resolved from (install.npm_registry at the time). */
    registry: z.string().url().max(2048),
    /** The package the app runs: `npm:<name>@<version>`. */
    root: z.object({ name: NpmPackageNameSchema, version: NpmExactVersionSchema }).strict(),
    packages: z.array(PinnedNpmPackageSchema).min(1).max(5000),
  })
  .strict()
  .superRefine((closure, ctx) => {
    const paths = new Set<string>();
    for (const [i, pkg] of closure.packages.entries()) {
      if (paths.has(pkg.path)) ctx.addIssue({ code: "custom", message: `${pkg.path} is pinned twice`, path: [i] });
      paths.add(pkg.path);
      if (pkg.path.endsWith(`node_modules/${pkg.name}`) === (pkg.alias === true))
        ctx.addIssue({
          code: "custom",
          message: pkg.alias ? `${pkg.path} is not an alias of ${pkg.name}` : `${pkg.path} does not hold ${pkg.name}`,
          path: [i],
        });
      if (new URL(pkg.resolved).origin !== new URL(closure.registry).origin)
        ctx.addIssue({ code: "custom", message: `${pkg.name}'s tarball is not on the closure's registry`, path: [i] });
    }
    if (!paths.has(`node_modules/${closure.root.name}`))
      ctx.addIssue({ code: "custom", message: `the root package ${closure.root.name} is not pinned` });
  });
export type NpmClosure = z.infer<typeof NpmClosureSchema>;

/** The review's words for a closure: where from, what, how many packages and how many bytes. */
export const NpmClosureReviewSchema = z.object({
  source: z.string(),
  registry: z.string(),
  root: z.string(),
  packages: z.number().int(),
  bytes: z.number().int(),
  /** Every package as `name@version`, sorted: an update's review shows which were added and removed. */
  pinned: z.array(z.string()),
  /** Packages that declare install scripts or ship native build files (none of it runs at install). */
  native: z.array(z.string()),
  /**
   * sha256 of every pin (place and integrity), computed by the bridge: the same versions with
   * other bytes change the review, so an update that re-pins them asks consent.
   */
  pinsSha256: z.string().optional(),
  note: z.string(),
});
export type NpmClosureReview = z.infer<typeof NpmClosureReviewSchema>;

export const NPM_CLOSURE_NOTE =
  "Every package is pinned by its sha512 integrity; the installer fetches exactly these tarballs from this registry in the sandbox, refuses any byte that differs, and runs no install script.";

/** The text whose sha256 is the review's pinsSha256: one line per package, `<path> <integrity>`, sorted. */
export function closurePinsText(closure: NpmClosure): string {
  return closure.packages
    .map((pkg) => `${pkg.path} ${pkg.integrity}\n`)
    .sort()
    .join("");
}

/** What the review shows of a closure; `pinsSha256` is the sha256 of closurePinsText (the kernel does not hash). */
export function npmClosureReview(closure: NpmClosure, pinsSha256?: string): NpmClosureReview {
  return {
    source: `npm:${closure.root.name}@${closure.root.version}`,
    registry: closure.registry,
    root: `${closure.root.name}@${closure.root.version}`,
    packages: closure.packages.length,
    bytes: closure.packages.reduce((sum, pkg) => sum + pkg.size, 0),
    pinned: [...new Set(closure.packages.map((pkg) => `${pkg.name}@${pkg.version}`))].sort(),
    native: closure.packages.filter((pkg) => pkg.native).map((pkg) => `${pkg.name}@${pkg.version}`),
    ...(pinsSha256 !== undefined ? { pinsSha256 } : {}),
    note: NPM_CLOSURE_NOTE,
  };
}

/** What an update changes in a closure, as the owner reads it before consenting. */
export interface NpmClosureDiff {
  /** `npm:<name>@<version>` before and after; null where there was (or is) no closure. */
  source: { before: string | null; after: string | null };
  registry: { before: string | null; after: string | null };
  /** Packages only the new closure has, and only the old one had, as `name@version`. */
  added: string[];
  removed: string[];
  /** Packages both have at other versions. */
  changed: Array<{ name: string; before: string[]; after: string[] }>;
  /** Packages with install scripts or native build files the old closure did not have. */
  newNative: string[];
  /** The same packages at the same versions, pinned to other bytes. */
  repinned: boolean;
}

function versionsByName(pinned: readonly string[]): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const id of pinned) {
    const at = id.lastIndexOf("@");
    const name = id.slice(0, at);
    byName.set(name, [...(byName.get(name) ?? []), id.slice(at + 1)]);
  }
  return byName;
}

/** The diff of two closure reviews (an installed app's and its update's). */
export function npmClosureDiff(before: NpmClosureReview | null, after: NpmClosureReview | null): NpmClosureDiff {
  const old = versionsByName(before?.pinned ?? []);
  const next = versionsByName(after?.pinned ?? []);
  const added: string[] = [];
  const removed: string[] = [];
  const changed: NpmClosureDiff["changed"] = [];
  for (const [name, versions] of next) {
    const was = old.get(name);
    if (!was) added.push(...versions.map((v) => `${name}@${v}`));
    else if (was.join() !== versions.join()) changed.push({ name, before: was, after: versions });
  }
  for (const [name, versions] of old) if (!next.has(name)) removed.push(...versions.map((v) => `${name}@${v}`));
  const wasNative = new Set(before?.native ?? []);
  return {
    source: { before: before?.source ?? null, after: after?.source ?? null },
    registry: { before: before?.registry ?? null, after: after?.registry ?? null },
    added,
    removed,
    changed,
    newNative: (after?.native ?? []).filter((id) => !wasNative.has(id)),
    repinned:
      added.length === 0 &&
      removed.length === 0 &&
      changed.length === 0 &&
      before?.pinsSha256 !== undefined &&
      after?.pinsSha256 !== undefined &&
      before.pinsSha256 !== after.pinsSha256,
  };
}
