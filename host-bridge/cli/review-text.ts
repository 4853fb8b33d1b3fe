// The install review in words for the terminal: prerequisites first, then what installing
// grants and runs, then the findings and the digest the owner consents to. Every string
// the bundle supplied goes through safeLine: a CR, an ANSI erase or a bidi override in a
// manifest field could otherwise rewrite a line above it ("Backend process: none").
import type { FileChanges, InstallReview } from "../../kernel/contracts/install-review";
import { escapeControls, safeLine } from "../../kernel/text/text-safety";
import { FINDINGS_WORDS, GRANT_WORDS } from "../../kernel/contracts/review-words";
import { McpRegistryEntryReviewSchema } from "../../kernel/contracts/mcp-registry";
import { MCPB_SIGNATURE_WORDS, type McpbSignatureState } from "../../kernel/contracts/mcpb-bundle";
import { SOURCE_SUMMARY_WORDS, sourceSummary } from "../../kernel/contracts/source-review";

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/**
 * A review as it may reach the terminal: only InstallReview's fields, any of them missing (a
 * record kept before a field existed) and any leaf of any type, since each is shown escaped.
 */
export type RenderableReview = Loose<InstallReview>;
type Loose<T> = T extends null | undefined
  ? never
  : T extends readonly (infer Item)[]
    ? Loose<Item>[]
    : T extends object
      ? { [K in keyof T]?: Loose<T[K]> | null }
      : unknown;

/** A bundle-supplied value as one escaped, masked line. */
function t(value: unknown): string {
  return safeLine(String(value ?? ""));
}

function list(items: readonly unknown[] | null | undefined): string {
  return items?.length ? items.map(t).join(", ") : "none";
}

function commandLine(command: { command?: unknown; args?: readonly unknown[] | null } | null | undefined): string {
  return command ? [command.command, ...(command.args ?? [])].map(t).join(" ") : "none";
}

function finding(f: Loose<InstallReview["findings"]["runtime"][number]>): string {
  return `  - [${t(f.severity)}] ${t(f.rule)} ${t(f.path)}:${t(f.line ?? "-")} ${t(f.message)}`;
}

/** One line per permission the review carries, labelled with the words every review uses (review-words.ts). */
function permissionLines(permissions: NonNullable<RenderableReview["permissions"]>): string[] {
  const values = permissions as Record<string, unknown>;
  return GRANT_WORDS.map(({ field, label, kind }) => {
    const value = values[field];
    if (kind === "flag") return `${label}: ${value === true ? "yes" : "no"}`;
    if (kind === "tier") return `${label}: ${t(value ?? "none")}`;
    if (kind === "list") return `${label}: ${list(Array.isArray(value) ? value : [])}`;
    const hosts = (value as { hosts?: unknown } | null | undefined)?.hosts;
    return `${label}: ${Array.isArray(hosts) && hosts.length > 0 ? list(hosts) : "none: no network at all"}`;
  });
}

function kib(bytes: unknown): string {
  return typeof bytes === "number" ? `${(bytes / 1024).toFixed(1)} KiB` : "size unknown";
}

/** Where an app from an MCP Registry came from: "official" only for the official registry's URL (the review says which). */
function registryEntryLines(entry: NonNullable<RenderableReview["mcpRegistryEntry"]>): string[] {
  const settings = (entry.settings ?? []).map((s) => {
    const state = s.secret
      ? "a secret: store it with `personalclaw secrets set` and `secrets assign` it to the app"
      : s.set
        ? "set"
        : `not given${s.required ? "" : " (optional)"}: add --env ${t(s.name)}=VALUE`;
    return `${t(s.name)} (${state})`;
  });
  return [
    `MCP Registry entry: ${t(entry.name)} ${t(entry.version)} (namespace ${t(entry.namespace)}) from ${t(entry.registry)}, ${entry.official === true ? "the official MCP Registry" : "not the official MCP Registry"}`,
    `  Resolved to: ${t(entry.package)}`,
    `  Variables it names: ${settings.length > 0 ? settings.join(", ") : "none"}`,
    ...(entry.note ? [`  ${t(entry.note)}`] : []),
  ];
}

/** An update's change of the MCP Registry entry an app came from, as one line: which entry, from where, resolved to what. */
export function registryEntryChangeLine(before: unknown, after: unknown): string {
  const words = (value: unknown) => {
    const entry = McpRegistryEntryReviewSchema.safeParse(value);
    if (!entry.success) return "none";
    const { name, version, registry, package: resolved } = entry.data;
    return `${t(name)} ${t(version)} from ${t(registry)} (${t(resolved)})`;
  };
  return `  changed MCP Registry entry: ${words(before)} -> ${words(after)}\n`;
}

/** A server's variables: each NAME=VALUE the manifest sets (a record kept before values were shown: the names). */
function envText(m: { env?: unknown; envNames?: readonly unknown[] | null }): string {
  const env = m.env && typeof m.env === "object" ? Object.entries(m.env as Record<string, unknown>) : null;
  if (env !== null) return env.length ? ` (env ${env.map(([k, v]) => `${t(k)}=${t(v)}`).join(", ")})` : "";
  return (m.envNames ?? []).length ? ` (env ${t((m.envNames ?? []).join(", "))})` : "";
}

/** The secrets a server holds: it gets each value itself, in its environment. */
function heldSecretsText(held: ReadonlyArray<{ variable?: unknown; secret?: unknown }> | null | undefined): string {
  if (!held?.length) return "";
  return `; it holds the value of ${held.map((h) => `the secret ${t(h.secret)} (in ${t(h.variable)})`).join(", ")}`;
}

/** The .mcpb bundle an app came from: the bytes pinned, what the bundle claims (marked as claims), the signature state. */
function mcpbBundleLines(bundle: NonNullable<RenderableReview["mcpbBundle"]>): string[] {
  const signature = Object.hasOwn(MCPB_SIGNATURE_WORDS, String(bundle.signature))
    ? (bundle.signature as McpbSignatureState)
    : "unsigned";
  const signer = bundle.signer;
  return [
    `Source: .mcpb bundle ${t(bundle.source)}`,
    // A hash is shown whole: t() would mask 64 hex characters as a credential.
    `  sha256 ${escapeControls(String(bundle.sha256))}, ${t(bundle.bytes)} bytes; manifest_version ${t(bundle.manifestVersion)}; ${t(bundle.files)} files, ${t(bundle.unpackedBytes)} bytes unpacked`,
    `  Publisher (as the bundle states it, not proven): ${t(bundle.author)}`,
    `  Bundle: ${t(bundle.name)} ${t(bundle.version)} (${t(bundle.serverType)} server)`,
    `  Compatibility: ${bundle.compatibility?.length ? bundle.compatibility.map(t).join("; ") : "none stated"}`,
    `  Signature: ${signer ? `signed by ${t(signer.subject)}, ` : ""}${MCPB_SIGNATURE_WORDS[signature]}`,
    ...(signer
      ? [
          // A fingerprint is shown whole: t() would mask its hex as a credential.
          `  Signer's certificate: issued by ${t(signer.issuer)}; sha256 ${escapeControls(String(signer.fingerprint))}; valid ${t(signer.validFrom)} to ${t(signer.validTo)}`,
          ...(signer.reason ? [`  Why it is not trusted: ${t(signer.reason)}`] : []),
        ]
      : []),
    `  user_config: ${list((bundle.userConfig ?? []).map((u) => `${t(u.key)} (${t(u.type)}): ${t(u.becomes)}`))}`,
  ];
}

/** Where an app generated from a package source comes from, at a glance (source-review.ts): none for any other app. */
function sourceSummaryLines(review: RenderableReview): string[] {
  const summary = sourceSummary(review);
  if (summary === null) return [];
  const w = SOURCE_SUMMARY_WORDS;
  const native =
    summary.native === null ? w.nativeUnknown : summary.native.length === 0 ? w.nativeNone : list(summary.native);
  const signature = summary.signature
    ? `${summary.signature.signer ? `signed by ${t(summary.signature.signer)}, ` : ""}${t(summary.signature.state)}`
    : w.signatureNone;
  return [
    `${w.heading}: ${t(summary.kind)} ${t(summary.name)} ${t(summary.version)}`,
    `  ${w.publisher}: ${t(summary.publisher)}`,
    `  ${w.pinned}: ${t(summary.pinned)}`,
    `  ${w.native}: ${native}`,
    `  ${w.signature}: ${signature}`,
  ];
}

/** Renders a review as lines of text; no bundle string can add, end or rewrite a line. */
export function reviewText(review: RenderableReview, digest: string): string {
  const lines: string[] = [];
  const app = review.app ?? {};
  lines.push(`${t(app.displayName ?? app.name)} (${t(app.name)} ${t(app.version)})`);
  if (app.description) lines.push(`  ${t(app.description)}`);
  const prerequisites = review.prerequisites ?? [];
  lines.push(`Needs: ${prerequisites.length ? "" : "nothing beyond PersonalClaw"}`);
  for (const p of prerequisites) lines.push(`  - ${t(p.name)}: ${t(p.why)} (${t(p.how)})`);
  lines.push("Permissions:");
  for (const line of permissionLines(review.permissions ?? {})) lines.push(`  ${line}`);
  lines.push(
    `Scheduled jobs: ${list((review.scheduledJobs ?? []).map((j) => `${t(j.name)} (${t(j.schedule)}${j.timezone && j.timezone !== "UTC" ? ` ${t(j.timezone)}` : ""}${j.route ? ` -> POST ${t(j.route)}` : ""})`))}`,
  );
  lines.push(`Python packages: ${list(review.pythonPackages)}`);
  lines.push(`npm packages: ${list(review.npmPackages?.packages)}`);
  if (review.npmPackages?.note && (review.npmPackages.packages ?? []).length > 0)
    lines.push(`  ${t(review.npmPackages.note)}`);
  lines.push(...sourceSummaryLines(review));
  const closure = review.npmClosure;
  if (closure) {
    lines.push(`Source: ${t(closure.source)} from ${t(closure.registry)}`);
    lines.push(
      `  ${t(closure.packages)} npm packages pinned by sha512 integrity, ${t(closure.bytes)} bytes of tarballs (${kib(closure.bytes)})`,
    );
    lines.push(`  Packages with install scripts or native build files (never run): ${list(closure.native)}`);
    if (closure.note) lines.push(`  ${t(closure.note)}`);
  }
  const pypi = review.pypiClosure;
  if (pypi) {
    lines.push(`Source: ${t(pypi.source)} from ${t(pypi.index)}`);
    lines.push(`  ${t(pypi.packages)} wheels pinned by sha256, ${t(pypi.bytes)} bytes (${kib(pypi.bytes)})`);
    lines.push(`  Wheels that are not pure Python: ${list(pypi.native)}`);
  }
  if (review.mcpRegistryEntry) lines.push(...registryEntryLines(review.mcpRegistryEntry));
  if (review.mcpbBundle) lines.push(...mcpbBundleLines(review.mcpbBundle));
  lines.push(`UI: ${t(review.ui?.entry ?? "none")}`);
  lines.push(`Backend process: ${commandLine(review.backend)}`);
  lines.push(`Install hook: ${commandLine(review.installHook)}`);
  lines.push(
    `MCP servers (run in the app's sandbox): ${list(
      (review.mcpServers ?? []).map(
        (m) =>
          `${t(m.name)}: ${m.url ? t(m.url) : commandLine({ command: m.command ?? "", args: m.args ?? [] })}${envText(m)}${heldSecretsText(m.secrets)}`,
      ),
    )}`,
  );
  lines.push(`Launched programs: ${list((review.launches ?? []).map((l) => l.program))}`);
  if (review.keptData) {
    const kept = review.keptData;
    lines.push(
      `Kept data: kept data from ${kept.version ?? "an unrecorded version"} of ${kept.parkedAt ?? "an unrecorded date"}; adopted only with --adopt-data, otherwise the app starts fresh and it stays parked`,
    );
  }
  lines.push(
    `Secrets it asks for (given only if you assign one): ${list((review.secrets ?? []).map((s) => `${t(s.name)} (${t(s.why)})`))}`,
  );
  for (const s of review.secrets ?? []) if (s.note) lines.push(`  ${t(s.name)}: ${t(s.note)}`);
  lines.push(`Writes outside its folder: ${list((review.writes ?? []).map((w) => w.path))}`);
  const runtime = review.findings?.runtime ?? [];
  const tests = review.findings?.tests ?? [];
  lines.push(`Findings ${lowerFirst(FINDINGS_WORDS.runtime)}: ${runtime.length}`);
  for (const f of runtime) lines.push(finding(f));
  lines.push(`Findings ${lowerFirst(FINDINGS_WORDS.tests)}: ${tests.length}`);
  for (const f of tests) lines.push(finding(f));
  lines.push(`Scan verdict: ${t(review.verdict)}`);
  lines.push(`Consent digest: ${escapeControls(String(digest))}`);
  return `${lines.join("\n")}\n`;
}

/**
 * The update's files against the installed copy's, as one line: "Files: adds a, b; changes c;
 * removes d and 3 more". Paths arrive made safe by the bridge and are made safe again here.
 */
export function fileChangesLine(files: FileChanges | undefined): string {
  if (!files) return "";
  const parts = (["added", "changed", "removed"] as const).flatMap((kind) => {
    const total = files.totals[kind];
    if (total === 0) return [];
    const listed = files[kind].map((path) => safeLine(path));
    const more = total > listed.length ? ` and ${total - listed.length} more` : "";
    return [`${FILE_VERBS[kind]} ${listed.join(", ")}${more}`];
  });
  return `  Files: ${parts.length > 0 ? parts.join("; ") : "the same files it runs now"}\n`;
}

const FILE_VERBS = { added: "adds", changed: "changes", removed: "removes" } as const;
