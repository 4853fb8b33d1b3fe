// Reads pypi-closure.json, the record of the PyPI closure an app was generated from, out of the
// bytes staging read, so the review and the digest describe the same bytes. Only a folder that
// `apps add` generated (in <quarantine>/sources/) may carry one: any other folder holding such a
// file would otherwise show the owner pins it merely claims. A record that does not parse shows
// nothing: the wheels themselves are what the installer pins (pythonDependencies, wheels/).
import { resolve, sep } from "node:path";
import {
  PypiClosureRecordSchema,
  pypiClosureReview,
  type PypiClosureReview,
} from "../../kernel/contracts/pypi-closure";
import { parseStrictJson } from "../../kernel/text/strict-json";
import type { StagedEntry } from "../staging/stage-bundle";
import { PYPI_CLOSURE_FILE } from "../sources/pypi-app";

/** The review of the record among the staged entries of a generated folder; null when there is none or it does not parse. */
export function pypiClosureOfStaged(
  source: string,
  quarantineRoot: string,
  entries: readonly StagedEntry[],
  bytes: Buffer | undefined,
): PypiClosureReview | null {
  if (!resolve(source).startsWith(resolve(quarantineRoot, "sources") + sep)) return null;
  const entry = entries.find((e) => e.path === PYPI_CLOSURE_FILE);
  if (entry === undefined || entry.type !== "file" || bytes === undefined) return null;
  const parsed = parseStrictJson(bytes.toString("utf8"));
  if (!parsed.ok) return null;
  const record = PypiClosureRecordSchema.safeParse(parsed.value);
  return record.success ? pypiClosureReview(record.data) : null;
}
