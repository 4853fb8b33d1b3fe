// <home>/state_manifest.json (0600): what each Durable Object's storage held when the
// gateway last looked — its file, its permanent store id and its row count. A start that finds
// a store the manifest knows missing, empty or replaced refuses, naming it, unless the owner
// accepts the loss (`--accept-state-loss`, which writes a security-log row). Lost state is
// then noticed instead of silently starting over with no sessions, apps or history.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { STORE_IDENTITY_READ, STORE_IDENTITY_TABLE } from "../kernel/contracts/store-identity";
import { writePrivateFile } from "./private-file";
import { readPrivateRecord } from "./private-record";

export const StoreCensusSchema = z.object({ storeId: z.string().nullable(), rows: z.number().int().min(0) });
export const StateManifestSchema = z.object({
  version: z.literal(1),
  writtenAt: z.string(),
  /** `<namespace uniqueKey>/<file>.sqlite` → what it held. */
  stores: z.record(z.string(), StoreCensusSchema),
  /**
   * The highest seq the security-log anchor (sel_anchor.json) was seen at. The anchor only moves
   * forward, so an anchor found below it was set back (a log cut at its tail and re-anchored).
   */
  anchorSeq: z.number().int().min(0).optional(),
});
export type StateManifest = z.infer<typeof StateManifestSchema>;
export type StoreCensus = z.infer<typeof StoreCensusSchema>;

export const STATE_MANIFEST_INTERVAL_MS = 60_000;

export function stateManifestPath(home: string): string {
  return join(home, "state_manifest.json");
}

/** Counts one store's rows and reads its id, read-only; null when the file is not a readable database. */
export function censusOf(file: string): StoreCensus | null {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 2_000 });
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .all() as Array<{ name: string }>;
    let rows = 0;
    let storeId: string | null = null;
    for (const { name } of tables) {
      if (name === STORE_IDENTITY_TABLE) {
        storeId = (db.prepare(STORE_IDENTITY_READ).get() as { store_id?: string } | undefined)?.store_id ?? null;
        continue;
      }
      rows += Number(
        (db.prepare(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`).get() as { n: number }).n,
      );
    }
    return { storeId, rows };
  } catch {
    return null;
  } finally {
    db?.close();
  }
}

/** Every store under <home>/state, by `<namespace>/<file>`. */
export function takeCensus(stateDir: string, namespaces: readonly string[]): Record<string, StoreCensus | null> {
  const out: Record<string, StoreCensus | null> = {};
  for (const namespace of namespaces) {
    const dir = join(stateDir, namespace);
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir)) {
      if (file.endsWith(".sqlite")) out[`${namespace}/${file}`] = censusOf(join(dir, file));
    }
  }
  return out;
}

export function readStateManifest(home: string): StateManifest | null {
  return readPrivateRecord(stateManifestPath(home), StateManifestSchema);
}

/** Writes what the stores hold now; a store that cannot be read keeps its last known census. */
export function writeStateManifest(
  home: string,
  stateDir: string,
  namespaces: readonly string[],
  anchorSeq: number | null,
): StateManifest {
  const previous = readStateManifest(home);
  const stores: Record<string, StoreCensus> = {};
  for (const [key, census] of Object.entries(takeCensus(stateDir, namespaces))) {
    const known = census ?? previous?.stores[key];
    if (known) stores[key] = known;
  }
  const highest = Math.max(anchorSeq ?? 0, previous?.anchorSeq ?? 0);
  const manifest: StateManifest = {
    version: 1,
    writtenAt: new Date().toISOString(),
    stores,
    ...(anchorSeq !== null || previous?.anchorSeq !== undefined ? { anchorSeq: highest } : {}),
  };
  writePrivateFile(stateManifestPath(home), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * After a start reported the anchor lost or set back: the record starts again from the anchor as
 * it now is, as a new anchor starts from the current head, so the next start does not report
 * the same loss again (the owner's acknowledgement is asked for once).
 */
export function restartRecordedAnchor(home: string, anchorSeq: number): void {
  const manifest = readStateManifest(home);
  if (manifest === null) return;
  writePrivateFile(stateManifestPath(home), `${JSON.stringify({ ...manifest, anchorSeq }, null, 2)}\n`);
}

export interface StateLoss {
  store: string;
  what: "missing" | "empty" | "replaced" | "unreadable";
  knownRows: number;
}

/** The stores the manifest knew held rows that are now missing, empty, unreadable or another store. */
export function findStateLoss(
  manifest: StateManifest | null,
  stateDir: string,
  namespaces: readonly string[],
): StateLoss[] {
  if (!manifest) return [];
  const now = takeCensus(stateDir, namespaces);
  const losses: StateLoss[] = [];
  for (const [store, known] of Object.entries(manifest.stores)) {
    if (known.rows === 0) continue;
    if (!(store in now)) losses.push({ store, what: "missing", knownRows: known.rows });
    else if (now[store] === null) losses.push({ store, what: "unreadable", knownRows: known.rows });
    else if (known.storeId !== null && now[store]!.storeId !== known.storeId)
      losses.push({ store, what: now[store]!.rows === 0 ? "empty" : "replaced", knownRows: known.rows });
    else if (now[store]!.rows === 0) losses.push({ store, what: "empty", knownRows: known.rows });
  }
  return losses;
}

/** One sentence per loss, naming the file and what the manifest knew of it. */
export function describeStateLoss(stateDir: string, manifest: StateManifest, losses: StateLoss[]): string {
  const lines = losses.map(
    (loss) =>
      `  ${join(stateDir, loss.store)} is ${loss.what}; the state manifest of ${manifest.writtenAt} says it held ${loss.knownRows} rows`,
  );
  return `${lines.join("\n")}\nRestore the file(s) from a backup, or start with --accept-state-loss to continue without them (a security-log row records that).`;
}
