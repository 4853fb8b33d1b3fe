// Reads an app's npm-closure.json, the one parser for it: the preview reads it from the bytes
// staging read (so the review and the digest describe the same bytes) and the installer reads it
// from the staged copy whose digest the owner consented to. A closure that does not parse is
// refused, never installed in part.
import { NPM_CLOSURE_FILE, NpmClosureSchema, type NpmClosure } from "../../kernel/contracts/npm-closure";
import { parseStrictJson } from "../../kernel/text/strict-json";
import type { StagedEntry } from "../staging/stage-bundle";
import { refuse, type Refusal } from "../staging/refusal";

export type ClosureRead = { ok: true; closure: NpmClosure } | Refusal;

/** Parses the text of npm-closure.json; a refusal names what is wrong. */
export function parseNpmClosure(text: string): ClosureRead {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) return refuse("npm_closure_invalid", { reason: "it is not JSON", path: NPM_CLOSURE_FILE });
  const closure = NpmClosureSchema.safeParse(parsed.value);
  if (!closure.success) {
    const issue = closure.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    return refuse("npm_closure_invalid", { reason: `${where}${issue.message}`, path: NPM_CLOSURE_FILE });
  }
  return { ok: true, closure: closure.data };
}

/** The closure among the staged entries, from the bytes staging read for it. */
export function closureOfStaged(entries: readonly StagedEntry[], bytes: Buffer | undefined): ClosureRead {
  const entry = entries.find((e) => e.path === NPM_CLOSURE_FILE);
  if (entry === undefined || entry.type !== "file")
    return refuse("npm_closure_invalid", {
      reason: "the manifest declares dependencies.npmClosure and the bundle has no such plain file",
      path: NPM_CLOSURE_FILE,
    });
  if (bytes === undefined)
    return refuse("npm_closure_invalid", { reason: "it is larger than a review reads whole", path: NPM_CLOSURE_FILE });
  return parseNpmClosure(bytes.toString("utf8"));
}
