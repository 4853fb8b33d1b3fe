// The app.json dependencies: packages installed into the app folder at install, and the rule
// that only registry packages are: a name, optionally with an exact version or a semver range.
import { z } from "zod";
import { refusal, type ManifestRefusal } from "./manifest-refusal";
import type { AppManifest } from "./manifest";

export const DependenciesSchema = z.object({
  pythonDependencies: z
    .array(z.string().min(1).max(512))
    .max(512)
    .meta({
      description:
        "Python requirements, installed into the app's own venv from the wheels it ships in wheels/ (no index, no source builds), in the sandbox without network.",
      owner: "Every requirement.",
      byDefault: "none",
    })
    .optional(),
  npmPackages: z
    .array(z.string().min(1).max(214))
    .max(128)
    .meta({
      description:
        "Registry packages (`name`, `name@1.2.3`, `name@^1.2`, `@scope/name@~1.0.0`) installed in the sandbox with install scripts off; `file:`, `git+`, URLs, aliases and dist-tags are refused.",
      owner: "Every package.",
      byDefault: "none",
    })
    .optional(),
  npmClosure: z
    .literal(true)
    .meta({
      description:
        "Install exactly the npm packages pinned in the app's `npm-closure.json` (each with its place, tarball URL and sha512 integrity), with `npm ci` exactness, in the sandbox with install scripts off; `apps add npm:` writes it.",
      owner: "The source, the package count and size, and which packages carry native code.",
      byDefault: "no closure",
    })
    .optional(),
});

// ---- npm specifiers (issue 11 item 2) -------------------------------------------------------
// Only registry packages are installed: a name, optionally with an exact version or a semver
// range. Every other form npm reads (file:, link:, github:, git+..., URLs, tarball paths,
// npm: aliases, user/repo shorthands, dist-tags) names code the registry never vouched for.

const NPM_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const SEMVER_PART = "(?:0|[1-9]\\d*|[xX*])";
const SEMVER_VERSION = `v?${SEMVER_PART}(?:\\.${SEMVER_PART}){0,2}(?:-[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?`;
const COMPARATOR = new RegExp(`^(?:<=|>=|<|>|=|~|\\^)?${SEMVER_VERSION}$`);
const PLAIN_VERSION = new RegExp(`^${SEMVER_VERSION}$`);

/** True for an npm package name alone (`name` or `@scope/name`), with no version. */
export function isNpmPackageName(name: string): boolean {
  return NPM_NAME.test(name);
}

/** True for a semver range as npm reads one: comparator sets joined by `||`, or `a - b`. */
export function isSemverRange(range: string): boolean {
  if (range.length === 0 || range.length > 256) return false;
  return range.split("||").every((set) => {
    const trimmed = set.trim();
    if (trimmed === "") return false;
    const hyphen = trimmed.split(" - ");
    if (hyphen.length === 2) return PLAIN_VERSION.test(hyphen[0]!.trim()) && PLAIN_VERSION.test(hyphen[1]!.trim());
    if (hyphen.length > 2) return false;
    return trimmed.split(/\s+/).every((comparator) => COMPARATOR.test(comparator));
  });
}

/** True only for `name`, `name@<version or range>`, `@scope/name` and `@scope/name@<version or range>`. */
export function isRegistryNpmSpec(spec: string): boolean {
  if (spec.length === 0 || spec.length > 300) return false;
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  const name = at === -1 ? spec : spec.slice(0, at);
  if (name.length > 214 || !NPM_NAME.test(name)) return false;
  // npm reads a name ending like an archive as a tarball path.
  if (/\.(tgz|tar|tar\.gz)$/i.test(name)) return false;
  return at === -1 || isSemverRange(spec.slice(at + 1));
}

/** Refuses an npm package that is not a registry name with an exact version or a semver range. */
export function checkNpmPackages(m: AppManifest): ManifestRefusal | null {
  for (const [i, spec] of (m.dependencies?.npmPackages ?? []).entries()) {
    const field = `dependencies.npmPackages[${i}]`;
    if (!isRegistryNpmSpec(spec))
      return refusal("manifest_npm_not_registry", field, { spec: spec.slice(0, 214) }, { field, value: spec });
  }
  return null;
}
