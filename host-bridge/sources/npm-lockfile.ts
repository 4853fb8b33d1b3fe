// The package.json and package-lock.json `npm ci` installs a pinned closure from, rendered from
// the app's npm-closure.json and nothing else: every package at its pinned place, from its
// pinned URL, with its pinned integrity. npm ci installs exactly the lockfile's tree or fails,
// and refuses a tarball whose bytes do not match its integrity (EINTEGRITY).
import type { NpmClosure } from "../../kernel/contracts/npm-closure";

/** The name the rendered root package carries (a private package no registry is asked about). */
const ROOT_NAME = "personalclaw-npm-closure";

export function closurePackageJson(closure: NpmClosure): string {
  const root = { name: ROOT_NAME, private: true, dependencies: { [closure.root.name]: closure.root.version } };
  return `${JSON.stringify(root, null, 2)}\n`;
}

export function closureLockfile(closure: NpmClosure): string {
  const packages: Record<string, unknown> = {
    "": { name: ROOT_NAME, dependencies: { [closure.root.name]: closure.root.version } },
  };
  for (const pkg of closure.packages) {
    packages[pkg.path] = {
      // An alias's entry names the package its folder holds, as npm writes it.
      ...(pkg.alias ? { name: pkg.name } : {}),
      version: pkg.version,
      resolved: pkg.resolved,
      integrity: pkg.integrity,
      ...(pkg.license ? { license: pkg.license } : {}),
      ...(pkg.optional ? { optional: true } : {}),
      ...(pkg.dependencies ? { dependencies: pkg.dependencies } : {}),
      ...(pkg.optionalDependencies ? { optionalDependencies: pkg.optionalDependencies } : {}),
      ...(pkg.peerDependencies ? { peerDependencies: pkg.peerDependencies } : {}),
      ...(pkg.bin ? { bin: pkg.bin } : {}),
      ...(pkg.native ? { hasInstallScript: true } : {}),
    };
  }
  return `${JSON.stringify({ name: ROOT_NAME, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`;
}

/** The package a lockfile integrity belongs to, for a refusal that names it. */
export function packageWithIntegrity(closure: NpmClosure, integrity: string): string | null {
  const pkg = closure.packages.find((p) => p.integrity === integrity);
  return pkg ? `${pkg.name}@${pkg.version}` : null;
}
