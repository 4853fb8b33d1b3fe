// The review's words for an app generated from a package source (InstallReviewSchema's
// npmClosure, mcpRegistryEntry and mcpbBundle): where it came from, who says they published it,
// the version, how many packages and bytes are pinned, which declare native code or install
// scripts (never run), and a bundle's signature state as the terminal states it: first the
// summary both reviews share (review-words.js, generated from the kernel), then the details. Read
// defensively like the rest of the review: a field a newer gateway adds is simply not shown.
import { el, listOf } from "./element.js";
import { MCPB_SIGNATURE_WORDS, SOURCE_SUMMARY_WORDS, sourceSummary } from "./review-words.js";

function line(label, value) {
  if (value === null || value === undefined || value === "") return null;
  return el("div", {}, el("dt", { text: label }), el("dd", {}, el("span", { text: String(value) })));
}

function closureLines(closure) {
  const native = listOf(closure.native);
  return [
    line("Source", `${closure.source} from ${closure.registry}`),
    line("Packages", `${closure.packages} npm packages pinned by sha512 integrity, ${closure.bytes} bytes of tarballs`),
    line(
      "Native code or install scripts (never run)",
      native.length === 0 ? "none" : native.map((id) => String(id)).join(", "),
    ),
  ];
}

function entryLines(entry) {
  return [
    line(
      "MCP Registry entry",
      `${entry.name} ${entry.version} from ${entry.registry} (${entry.official === true ? "the official MCP Registry" : "not the official MCP Registry"})`,
    ),
    line("Namespace", entry.namespace),
    line("Resolved to", entry.package),
  ];
}

/** The signature as the terminal states it: "signed by <subject>, " and the state's words, never verified when it is not. */
function signatureWords(bundle) {
  const state = Object.hasOwn(MCPB_SIGNATURE_WORDS, String(bundle.signature)) ? bundle.signature : "unsigned";
  const signer = bundle.signer && typeof bundle.signer === "object" ? bundle.signer : null;
  return `${signer ? `signed by ${signer.subject}, ` : ""}${MCPB_SIGNATURE_WORDS[state]}`;
}

/** Where it comes from at a glance: the same summary and labels as the terminal's review. */
function summaryLines(summary) {
  const w = SOURCE_SUMMARY_WORDS;
  const native =
    summary.native === null ? w.nativeUnknown : summary.native.length === 0 ? w.nativeNone : summary.native.join(", ");
  const signature = summary.signature
    ? `${summary.signature.signer ? `signed by ${summary.signature.signer}, ` : ""}${summary.signature.state}`
    : w.signatureNone;
  return [
    line(w.source, `${summary.kind} ${summary.name} ${summary.version}`),
    line(w.publisher, summary.publisher),
    line(w.pinned, summary.pinned),
    line(w.native, native),
    line(w.signature, signature),
  ];
}

function bundleLines(bundle) {
  const signer = bundle.signer && typeof bundle.signer === "object" ? bundle.signer : null;
  return [
    line("Bundle", `${bundle.source} (${bundle.bytes} bytes, sha256 ${bundle.sha256})`),
    line(
      "Bundle",
      `${bundle.name} ${bundle.version} by ${bundle.author} (the bundle's own claim), a ${bundle.serverType} server`,
    ),
    line("Signature", signatureWords(bundle)),
    signer
      ? line(
          "Signer's certificate",
          `issued by ${signer.issuer}; sha256 ${signer.fingerprint}; valid ${signer.validFrom} to ${signer.validTo}`,
        )
      : null,
    signer?.reason ? line("Why it is not trusted", signer.reason) : null,
    listOf(bundle.userConfig).length > 0
      ? line(
          "Its settings",
          listOf(bundle.userConfig)
            .map((u) => `${u.key}: ${u.becomes}`)
            .join("; "),
        )
      : null,
  ];
}

/** The "Package source" part of a review, or null for an app not generated from a source. */
export function sourcePart(review) {
  const closure = review.npmClosure && typeof review.npmClosure === "object" ? review.npmClosure : null;
  const entry = review.mcpRegistryEntry && typeof review.mcpRegistryEntry === "object" ? review.mcpRegistryEntry : null;
  const bundle = review.mcpbBundle && typeof review.mcpbBundle === "object" ? review.mcpbBundle : null;
  const summary = sourceSummary(review);
  if (!closure && !entry && !bundle && !summary) return null;
  const notes = [entry?.note, closure?.note].filter((n) => typeof n === "string" && n !== "");
  return el(
    "section",
    { class: "review-part", "data-part": "package-source" },
    el("h4", { text: "Package source" }),
    summary ? el("dl", { class: "terms source-summary" }, summaryLines(summary)) : null,
    el(
      "dl",
      { class: "terms" },
      entry ? entryLines(entry) : null,
      bundle ? bundleLines(bundle) : null,
      closure ? closureLines(closure) : null,
    ),
    notes.map((note) => el("p", { class: "muted", text: note })),
  );
}
