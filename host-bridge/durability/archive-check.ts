// Everything a restore checks before it writes a byte (docs/backup-and-restore.md, "Restore"):
// the archive's container and signature, every part's SHA-256, the passphrase, where each part
// may go, each Durable Object's export, and that the security log inside is the log that signed
// the manifest — its key is the checkpoint's, its newest row is the head the manifest names, and
// its rows extend the checkpoint; and that every package file it carries is the one its app pins
// (carried-packages.ts). Any failure is `archive_invalid` (or `archive_passphrase_wrong`,
// `pypi_hash_mismatch`, `npm_integrity_mismatch`), thrown before the caller has written anything.
import { z } from "zod";
import type { StoredRow } from "../../kernel/chain/chain-mac";
import { openCheckpoint } from "../../kernel/chain/checkpoint";
import { provesCheckpoint } from "../../kernel/chain/extends-checkpoint";
import { GatewayStateExportSchema, type GatewayStateExport, type TableExport } from "../../kernel/contracts/durability";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { DURABLE_OBJECT_CLASSES } from "../durable-object-stores";
import type { PartEntry } from "./archive-format";
import { OpenedArchive, invalid } from "./archive-reader";
import { publicRawOf, verifierRaw } from "./archive-signature";
import { checkCarriedPackages } from "./carried-packages";
import { HOME_FILES, HOME_FOLDERS } from "./home-parts";

export interface CheckedArchive {
  archive: OpenedArchive;
  key: Buffer;
  state: GatewayStateExport;
}

/** Where a part of each kind may be written: nowhere else, whatever the (signed) manifest says. */
function partAllowed(part: PartEntry): boolean {
  const [top, second, third] = part.path.split("/");
  switch (part.kind) {
    case "store":
      return top === "state" && DURABLE_OBJECT_CLASSES.some((d) => part.path === `state/${d.className}.json`);
    case "home-file":
      return HOME_FILES.includes(part.path) || (HOME_FOLDERS.includes(top!) && second !== undefined);
    case "app-file":
      return (
        top === "apps" &&
        second === part.app &&
        APP_NAME_PATTERN.test(second ?? "") &&
        third !== undefined &&
        third !== "data"
      );
    case "app-data":
      return top === "apps" && second === part.app && APP_NAME_PATTERN.test(second ?? "") && third === "data";
  }
}

function column(table: TableExport | undefined, name: string): number {
  return table?.columns.indexOf(name) ?? -1;
}

/** The log's rows from its export, in seq order, as the verifier reads them. */
export function exportedRows(state: GatewayStateExport): StoredRow[] {
  const events = state.stores.SecurityLog.tables.find((t) => t.name === "events");
  if (!events) return [];
  const at = (name: string) => column(events, name);
  return events.rows
    .map((row) => {
      let detail: unknown;
      try {
        detail = JSON.parse(String(row[at("detail")]));
      } catch {
        detail = { "[unreadable detail]": row[at("detail")] };
      }
      return {
        seq: Number(row[at("seq")]),
        ts: String(row[at("ts")]),
        kind: String(row[at("kind")]),
        principal: String(row[at("principal")]),
        outcome: String(row[at("outcome")]),
        subject: String(row[at("subject")]),
        detail,
        segment: Number(row[at("segment")]),
        prev_mac: String(row[at("prev_mac")]),
        mac: String(row[at("mac")]),
      } as StoredRow;
    })
    .sort((a, b) => a.seq - b.seq);
}

/** A row's seq and mac against a head's. A mac is the chain's public value (the anchor file holds one), not a secret. */
function sameHead(a: { seq: number; mac: string }, b: { seq: number; mac: string }): boolean {
  // eslint-disable-next-line no-restricted-syntax -- a chain mac is public (sel_anchor.json), compared as any value
  return a.seq === b.seq && a.mac === b.mac;
}

/** The log inside is the one that signed: same key, same head, and its rows extend the checkpoint. */
async function checkLogBinding(archive: OpenedArchive, state: GatewayStateExport): Promise<void> {
  const { log } = archive.manifest;
  const identity = state.stores.SecurityLog.tables.find((t) => t.name === "log_identity");
  const pkcs8 = identity?.rows[0]?.[column(identity, "signing_pkcs8")];
  if (typeof pkcs8 !== "string") throw invalid("its security log has no checkpoint key");
  if (publicRawOf(pkcs8) !== verifierRaw(log.checkpoint.public_key))
    throw invalid("its security log is not the log that signed the manifest");
  const facts = state.stores.SecurityLog.log;
  if (!sameHead(facts.head, log.head)) throw invalid("its security log does not end at the head the manifest names");
  const rows = exportedRows(state);
  const last = rows[rows.length - 1];
  if (!sameHead(last ?? { seq: 0, mac: log.head.mac }, log.head))
    throw invalid("its security log's newest row is not the manifest's head");
  const opened = await openCheckpoint(log.checkpoint.note, log.checkpoint.public_key);
  if (!opened.ok) throw invalid(`its checkpoint does not verify: ${opened.reason}`);
  const proof = await provesCheckpoint(rows, opened.checkpoint);
  if (proof.standing !== "extends")
    throw invalid(`its security log does not extend its checkpoint (${proof.standing})`);
}

/** Opens and checks the archive at `path`; the caller closes `archive`. */
export async function checkArchive(
  path: string,
  passphrase: string,
  progress?: (line: string) => void,
): Promise<CheckedArchive> {
  const archive = await OpenedArchive.open(path);
  try {
    progress?.(`restore: checking ${archive.manifest.parts.length} parts`);
    await archive.verifyParts();
    const key = archive.unlock(passphrase);
    for (const part of archive.manifest.parts)
      if (!partAllowed(part)) throw invalid(`the part ${JSON.stringify(part.path)} would go where no part may`);
    await checkCarriedPackages(archive, key);
    const stores: Record<string, unknown> = {};
    for (const part of archive.manifest.parts.filter((p) => p.kind === "store")) {
      const name = part.path.slice("state/".length, -".json".length);
      try {
        stores[name] = JSON.parse((await archive.readPart(key, part)).toString("utf8"));
      } catch (error) {
        if (error instanceof z.ZodError || error instanceof SyntaxError) throw invalid(`${part.path} is not JSON`);
        throw error;
      }
    }
    const parsed = GatewayStateExportSchema.safeParse({ stores });
    if (!parsed.success)
      throw invalid(`a Durable Object's export is not readable (${parsed.error.issues[0]?.path.join(".")})`);
    await checkLogBinding(archive, parsed.data);
    return { archive, key, state: parsed.data };
  } catch (error) {
    await archive.close();
    throw error;
  }
}
