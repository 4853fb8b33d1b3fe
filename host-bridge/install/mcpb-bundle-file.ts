// Reads mcpb-bundle.json, the record of the .mcpb bundle an app was generated from, out of the
// bytes staging read, so the review and the digest describe the same bytes. Only a folder that
// `apps add` generated (in <quarantine>/sources/) may carry one: any other folder holding such a
// file would otherwise show the owner a bundle, a sha256 and a publisher it merely claims.
import { resolve, sep } from "node:path";
import { MCPB_BUNDLE_FILE, McpbBundleRecordSchema, type McpbBundleRecord } from "../../kernel/contracts/mcpb-bundle";
import { parseStrictJson } from "../../kernel/text/strict-json";
import { refuse, type Refusal } from "../staging/refusal";
import type { StagedEntry } from "../staging/stage-bundle";

/** The record among the staged entries of a generated folder: null when there is none or the folder is not generated. */
export function mcpbBundleOfStaged(
  source: string,
  quarantineRoot: string,
  entries: readonly StagedEntry[],
  bytes: Buffer | undefined,
): { ok: true; record: McpbBundleRecord } | Refusal | null {
  if (!resolve(source).startsWith(resolve(quarantineRoot, "sources") + sep)) return null;
  const entry = entries.find((e) => e.path === MCPB_BUNDLE_FILE);
  if (entry === undefined) return null;
  const invalid = (reason: string) =>
    refuse("mcpb_archive_invalid", { reason: `${MCPB_BUNDLE_FILE} ${reason}`, path: MCPB_BUNDLE_FILE });
  if (entry.type !== "file" || bytes === undefined) return invalid("is not a plain file a review reads whole");
  const parsed = parseStrictJson(bytes.toString("utf8"));
  if (!parsed.ok) return invalid("is not JSON");
  const record = McpbBundleRecordSchema.safeParse(parsed.value);
  if (!record.success) return invalid(`is not a bundle record (${record.error.issues[0]!.message})`);
  return { ok: true, record: record.data };
}
