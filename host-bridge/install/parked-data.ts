// Parked data (UNIN-01, issue 11 item 5): a keep-data uninstall moves the app's data/ to
// apps/.<name>.data/ and writes apps/.<name>.data.json (0600) naming the install it came from:
// name, version, consent digest and date. A later install of the name shows that record in its
// review and adopts the data only with the owner's explicit {"adopt_data": true}.
import { existsSync } from "node:fs";
import { lstat, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { ParkedDataSchema, type ParkedData, type ParkedDataView } from "../../kernel/contracts/parked-data";
import { writePrivateFile } from "../private-file";
import { syncFolder } from "./transition-journal";
import { readPrivateRecord } from "../private-record";

const PARKED_RE = /^\.([a-z0-9]+(?:-[a-z0-9]+)*)\.data$/;
const MAX_RECORD_BYTES = 4096;

/** Where a keep-data uninstall parks an app's data/. */
export function parkedDataDir(appsDir: string, name: string): string {
  return join(appsDir, `.${name}.data`);
}

/** The owner-only record beside the parked data/. */
export function parkedRecordPath(appsDir: string, name: string): string {
  return join(appsDir, `.${name}.data.json`);
}

/** Reads the record without following a link; null when it is missing, a link or not a valid record. */
async function readParkedRecord(appsDir: string, name: string): Promise<ParkedData | null> {
  const record = readPrivateRecord(parkedRecordPath(appsDir, name), ParkedDataSchema, MAX_RECORD_BYTES);
  return record?.name === name ? record : null;
}

/** The parked data of `name`, or null when none is parked. */
export async function parkedDataOf(appsDir: string, name: string): Promise<ParkedDataView | null> {
  const st = await lstat(parkedDataDir(appsDir, name)).catch(() => null);
  if (!st?.isDirectory()) return null;
  const record = await readParkedRecord(appsDir, name);
  return {
    name,
    version: record?.version ?? null,
    consentDigest: record?.consentDigest ?? null,
    parkedAt: record?.parkedAt ?? null,
  };
}

/** Every parked data/ under the apps folder, by name. */
export async function listParkedData(appsDir: string): Promise<ParkedDataView[]> {
  const names = existsSync(appsDir) ? await readdir(appsDir) : [];
  const out: ParkedDataView[] = [];
  for (const entry of names.sort()) {
    const match = PARKED_RE.exec(entry);
    if (!match) continue;
    const view = await parkedDataOf(appsDir, match[1]!);
    if (view) out.push(view);
  }
  return out;
}

/**
 * Parks `dataDir` as the data of `record.name`, with its record. Refuses when data of an
 * earlier install is already parked: replacing it would destroy data nobody chose to delete.
 */
export async function parkData(appsDir: string, dataDir: string, record: ParkedData): Promise<void> {
  const parked = parkedDataDir(appsDir, record.name);
  if (existsSync(parked)) throw new GatewayError("parked_data_exists", { vars: { name: record.name } });
  // The record is on disk (file and folder flushed) before the data moves, and the move is
  // flushed too: after a power cut, parked data is never without the record that names it.
  writePrivateFile(parkedRecordPath(appsDir, record.name), `${JSON.stringify(ParkedDataSchema.parse(record))}\n`);
  await rename(dataDir, parked);
  await syncFolder(appsDir);
}

/** Moves the parked data of `name` to `intoDataDir` (which must not exist) and drops its record. */
export async function adoptParkedData(appsDir: string, name: string, intoDataDir: string): Promise<void> {
  await rename(parkedDataDir(appsDir, name), intoDataDir);
  await rm(parkedRecordPath(appsDir, name), { force: true });
}

/** Deletes the parked data of `name` and its record; 404 parked_data_not_found when none is parked. */
export async function purgeParkedData(appsDir: string, name: string): Promise<void> {
  const parked = parkedDataDir(appsDir, name);
  if (!existsSync(parked) && !existsSync(parkedRecordPath(appsDir, name)))
    throw new GatewayError("parked_data_not_found", { vars: { name } });
  await rm(parked, { recursive: true, force: true });
  await rm(parkedRecordPath(appsDir, name), { force: true });
}
