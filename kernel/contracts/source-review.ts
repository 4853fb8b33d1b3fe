// Where an app generated from a package source comes from, in one summary both reviews show first
// (issue 36): the kind of source, the package and its version, who publishes it and how far that
// is proven, how many packages are pinned and their size, which parts are native code, and the
// signature state. It is read from what the review already carries (npmClosure, pypiClosure,
// mcpRegistryEntry, mcpbBundle), so it adds nothing to the consent digest. The terminal renders it
// (host-bridge/cli/review-text.ts) and the dashboard renders the same function, copied into the
// generated web/review-words.js: `sourceSummary` names nothing outside its own body for that
// reason, and reads every field defensively (a review kept before a field existed). Imports nothing.

/** The summary of one source; null fields are not known for that kind of source. */
export interface SourceSummary {
  /** "npm package", "PyPI project", ".mcpb bundle" or "MCP Registry entry". */
  kind: string;
  name: string;
  version: string;
  /** Who publishes it and how far that is proven, in words. */
  publisher: string;
  packages: number | null;
  bytes: number | null;
  /** What is pinned and by what, in words ("12 npm packages, 1.2 MiB of tarballs, each by its sha512 integrity"). */
  pinned: string;
  /** The packages or files that are native code (or may build it); [] when none. */
  native: string[] | null;
  /** A bundle's signature state ("unsigned", "verified", "untrusted") and signer; null for a source that has none. */
  signature: { state: string; signer: string | null } | null;
}

/** The source summary of a review, or null for an app not generated from a package source. */
export function sourceSummary(review: unknown): SourceSummary | null {
  const object = (value: unknown): Record<string, unknown> | null =>
    value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  const text = (value: unknown): string => (typeof value === "string" ? value : "");
  const count = (value: unknown): number | null => (typeof value === "number" ? value : null);
  const size = (n: number | null): string =>
    n === null
      ? "size unknown"
      : n < 1024 * 1024
        ? `${(n / 1024).toFixed(1)} KiB`
        : `${(n / 1024 / 1024).toFixed(1)} MiB`;
  const r = object(review) ?? {};
  const closure = object(r.npmClosure);
  const entry = object(r.mcpRegistryEntry);
  const bundle = object(r.mcpbBundle);
  const pypi = object(r.pypiClosure);
  let packages: number | null = null;
  let bytes: number | null = null;
  let native: string[] | null = null;
  let signature: SourceSummary["signature"] = null;
  let pinned = "not recorded";
  if (closure) {
    packages = count(closure.packages);
    bytes = count(closure.bytes);
    native = Array.isArray(closure.native) ? closure.native.map(String) : null;
    pinned = `${packages ?? "?"} npm packages, ${size(bytes)} of tarballs, each by its sha512 integrity`;
  }
  if (pypi) {
    packages = count(pypi.packages);
    bytes = count(pypi.bytes);
    native = Array.isArray(pypi.native) ? pypi.native.map(String) : null;
    pinned = `${packages ?? "?"} wheels, ${size(bytes)}, each by its sha256`;
  }
  if (bundle) {
    packages = count(bundle.files);
    bytes = count(bundle.unpackedBytes);
    pinned = `the bundle by its sha256 (${size(count(bundle.bytes))}): ${packages ?? "?"} files, ${size(bytes)} unpacked`;
    native = bundle.serverType === "binary" ? ["its server, a program built for this machine"] : null;
    const signer = object(bundle.signer);
    signature = { state: text(bundle.signature) || "unsigned", signer: signer ? text(signer.subject) : null };
  }
  if (entry) {
    const official = entry.official === true;
    return {
      kind: "MCP Registry entry",
      name: text(entry.name),
      version: text(entry.version),
      publisher: `the namespace ${text(entry.namespace)}, ${official ? "whose owner the official MCP Registry verified" : `as the registry ${text(entry.registry)} lists it (not the official MCP Registry)`}`,
      packages,
      bytes,
      pinned,
      native,
      signature,
    };
  }
  if (bundle) {
    const signer = signature?.state === "verified" ? signature.signer : undefined;
    return {
      kind: ".mcpb bundle",
      name: text(bundle.name),
      version: text(bundle.version),
      publisher: signer
        ? `${signer}, whose signature is verified (the bundle says ${text(bundle.author)})`
        : `${text(bundle.author)}, as the bundle states it (not proven)`,
      packages,
      bytes,
      pinned,
      native,
      signature,
    };
  }
  if (pypi) {
    const project = /^pypi:(.+)==(.+)$/.exec(text(pypi.source));
    return {
      kind: "PyPI project",
      name: project ? project[1]! : text(pypi.source),
      version: project ? project[2]! : "",
      publisher: `not stated: a project of ${text(pypi.index)}, which names no publisher PersonalClaw checks`,
      packages,
      bytes,
      pinned,
      native,
      signature,
    };
  }
  if (closure) {
    const root = text(closure.root);
    const at = root.lastIndexOf("@");
    const name = at > 0 ? root.slice(0, at) : root;
    const scope = name.startsWith("@") ? name.slice(0, name.indexOf("/")) : null;
    return {
      kind: "npm package",
      name,
      version: at > 0 ? root.slice(at + 1) : "",
      publisher: scope
        ? `the npm scope ${scope}, as ${text(closure.registry)} serves it (no signature is checked)`
        : `not stated: an unscoped package of ${text(closure.registry)} (no signature is checked)`,
      packages,
      bytes,
      pinned,
      native,
      signature,
    };
  }
  return null;
}

/** The labels of the summary's lines, in the order both reviews show them. */
export const SOURCE_SUMMARY_WORDS = {
  heading: "Where it comes from",
  source: "Source",
  publisher: "Publisher",
  pinned: "Pinned",
  native: "Native code",
  nativeNone: "none",
  nativeUnknown: "not known for this source",
  signature: "Signature",
  signatureNone: "none: this kind of source carries no signature",
} as const;
