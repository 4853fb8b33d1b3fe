// Reads a generated app's mcp-registry-entry.json, the one parser for it: the preview reads it
// from the bytes staging read, so the review and the digest describe the same bytes. Threat: a
// folder that lends itself a registry's name ("from the official MCP Registry") to look vouched
// for. The record is read only in a folder `apps add` generated, under the quarantine's sources/
// folder, which only the owner's own CLI writes (inside the home, 0700); in any other folder the
// file is an ordinary file the review does not read.
import { resolve, sep } from "node:path";
import {
  MCP_REGISTRY_ENTRY_FILE,
  McpRegistryOriginSchema,
  type McpRegistryOrigin,
} from "../../kernel/contracts/mcp-registry";
import { parseStrictJson } from "../../kernel/text/strict-json";
import type { StagedEntry } from "../staging/stage-bundle";
import { refuse, type Refusal } from "../staging/refusal";

/** The quarantine's folder that `apps add` writes its generated apps into (sources/npm-app.ts). */
export const GENERATED_SOURCES_FOLDER = "sources";

/** True when `source` is a folder `apps add` generated: inside `<quarantine>/sources/`. */
export function isGeneratedSourceFolder(source: string, quarantineRoot: string): boolean {
  return resolve(source).startsWith(resolve(quarantineRoot, GENERATED_SOURCES_FOLDER) + sep);
}

/** The record among the staged entries: null when there is none, a refusal when it does not parse. */
export function registryEntryOfStaged(
  entries: readonly StagedEntry[],
  bytes: Buffer | undefined,
): { ok: true; origin: McpRegistryOrigin } | Refusal | null {
  const entry = entries.find((e) => e.path === MCP_REGISTRY_ENTRY_FILE);
  if (entry === undefined) return null;
  const invalid = (reason: string) =>
    refuse("mcp_registry_entry_file_invalid", { reason, path: MCP_REGISTRY_ENTRY_FILE });
  if (entry.type !== "file" || bytes === undefined) return invalid("it is not a plain file the review reads whole");
  const parsed = parseStrictJson(bytes.toString("utf8"));
  if (!parsed.ok) return invalid("it is not JSON");
  const origin = McpRegistryOriginSchema.safeParse(parsed.value);
  if (!origin.success) {
    const issue = origin.error.issues[0]!;
    return invalid(`${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}`);
  }
  return { ok: true, origin: origin.data };
}
