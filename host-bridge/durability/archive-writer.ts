// Writes one backup archive (archive-format.ts) of a running home: the Durable Objects' exports
// the gateway handed over, then the home's parts (home-parts.ts), each sealed to the owner's
// passphrase, then the signed manifest. The archive is written under `<target>.partial` and
// renamed to `target` only once whole and flushed: a kill at any step leaves no archive under
// the final name, only a `.partial` the next backup sweeps.
import { createHash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { mkdir, open, rename, rm, readdir, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import type { GatewayStateExport } from "../../kernel/contracts/durability";
import { DURABLE_OBJECT_CLASSES, storeFolder } from "../durable-object-stores";
import { syncFolder } from "../private-file";
import {
  ARCHIVE_MAGIC,
  CHUNK_BYTES,
  TRAILER_MAGIC,
  keyCheck,
  newArchiveKey,
  sealPart,
  sealedSize,
  type Manifest,
  type PartEntry,
} from "./archive-format";
import { signManifest } from "./archive-signature";
import { planHomeParts, type PlannedPart } from "./home-parts";

/** The steps of a backup, in order; the test build can pause at each (`backup:<step>`). */
export const BACKUP_STEPS = ["export", "copy_data", "seal_parts", "sign", "rename"] as const;
export type BackupStep = (typeof BACKUP_STEPS)[number];

export interface BackupInput {
  home: string;
  state: GatewayStateExport;
  passphrase: string;
  version: string;
  /** Called as each step begins; awaited, so the test build can hold the backup there. */
  step: (step: BackupStep, detail?: string) => Promise<void>;
}

export interface WrittenArchive {
  path: string;
  bytes: number;
  parts: number;
  apps: string[];
  log_head: { seq: number; mac: string };
}

/** Reads `plainSize` bytes of a file in CHUNK_BYTES pieces from one descriptor opened without following a link. */
async function* fileChunks(fh: FileHandle, plainSize: number, path: string): AsyncGenerator<Buffer> {
  let position = 0;
  while (position < plainSize) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, plainSize - position));
    const { bytesRead } = await fh.read(buf, 0, buf.length, position);
    if (bytesRead !== buf.length) throw new Error(`${path} shrank while it was read`);
    position += bytesRead;
    yield buf;
  }
}

async function* bufferChunks(bytes: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, at + CHUNK_BYTES);
}

/** Seals one part at `offset` of `out`; answers its manifest entry. */
async function writePart(out: FileHandle, offset: number, key: Buffer, part: PlannedPart): Promise<PartEntry> {
  const hash = createHash("sha256");
  let written = 0;
  let fh: FileHandle | null = null;
  try {
    let plainSize: number;
    let chunks: AsyncIterable<Buffer>;
    if (part.bytes) {
      plainSize = part.bytes.length;
      chunks = bufferChunks(part.bytes);
    } else {
      fh = await open(part.source!, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
      const st = await fh.stat();
      if (!st.isFile()) throw new Error(`${part.path} is not a file`);
      plainSize = st.size;
      chunks = fileChunks(fh, plainSize, part.path);
    }
    for await (const sealed of sealPart(key, part.path, plainSize, chunks)) {
      hash.update(sealed);
      await out.write(sealed, 0, sealed.length, offset + written);
      written += sealed.length;
    }
    if (written !== sealedSize(plainSize)) throw new Error(`${part.path}: sealed size mismatch`);
    return {
      path: part.path,
      kind: part.kind,
      ...(part.app ? { app: part.app } : {}),
      mode: part.mode,
      offset,
      size: written,
      plain_size: plainSize,
      sha256: hash.digest("hex"),
    };
  } finally {
    await fh?.close();
  }
}

/** Each Durable Object's storage file name in this home (the same name in every home: ids come from fixed names). */
async function storeFiles(home: string): Promise<Manifest["store_files"]> {
  const out: Manifest["store_files"] = [];
  for (const { className } of DURABLE_OBJECT_CLASSES) {
    const names = await readdir(storeFolder(join(home, "state"), className)).catch(() => [] as string[]);
    const file = names.find((n) => n.endsWith(".sqlite") && n !== "metadata.sqlite");
    if (file) out.push({ className, file });
  }
  return out;
}

/** What a killed backup left beside `target`: its `.partial` archive and its data copies. */
async function sweepPartials(target: string): Promise<void> {
  const dir = dirname(target);
  for (const name of await readdir(dir).catch(() => [] as string[]))
    if (name.startsWith(".backup-") && (name.endsWith(".partial") || name.endsWith(".partial.data")))
      await rm(join(dir, name), { recursive: true, force: true });
}

/** Writes the archive of `input.home` at `target`; nothing is under `target` until it is whole. */
export async function writeArchive(target: string, input: BackupInput): Promise<WrittenArchive> {
  const { home, state } = input;
  const identity = state.stores.SecurityLog.tables.find((t) => t.name === "log_identity");
  const pkcs8At = identity?.columns.indexOf("signing_pkcs8") ?? -1;
  const signingPkcs8 = identity?.rows[0]?.[pkcs8At];
  if (typeof signingPkcs8 !== "string") throw new GatewayError("internal_error");
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  await sweepPartials(target);
  const partial = join(dirname(target), `.backup-${basename(target)}.partial`);
  const staging = `${partial}.data`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true, mode: 0o700 });
  let out: FileHandle | null = null;
  try {
    await input.step("copy_data");
    const digests = new Map<string, string>();
    const appsTable = state.stores.AppRegistry.tables.find((t) => t.name === "apps");
    for (const row of appsTable?.rows ?? []) {
      const record = JSON.parse(String(row[appsTable!.columns.indexOf("record")])) as {
        name: string;
        consentDigest?: string;
      };
      if (record.consentDigest) digests.set(record.name, record.consentDigest);
    }
    const plan = await planHomeParts(home, staging, digests);
    const storeParts: PlannedPart[] = Object.entries(state.stores).map(([className, exported]) => ({
      path: `state/${className}.json`,
      kind: "store",
      mode: 0o600,
      bytes: Buffer.from(JSON.stringify(exported), "utf8"),
    }));
    await input.step("seal_parts", `${plan.parts.length + storeParts.length} parts`);
    const key = newArchiveKey(input.passphrase);
    out = await open(partial, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
    await out.write(ARCHIVE_MAGIC, 0, ARCHIVE_MAGIC.length, 0);
    let offset = ARCHIVE_MAGIC.length;
    const entries: PartEntry[] = [];
    for (const part of [...storeParts, ...plan.parts]) {
      const entry = await writePart(out, offset, key.key, part);
      entries.push(entry);
      offset += entry.size;
    }
    await input.step("sign");
    const manifest: Manifest = {
      format: "personalclaw-backup",
      version: 1,
      created_at: new Date().toISOString(),
      gateway_version: input.version,
      kdf: key.kdf,
      key_check: keyCheck(key.key),
      log: state.stores.SecurityLog.log,
      store_files: await storeFiles(home),
      apps: plan.apps,
      parts: entries,
      folders: plan.folders,
      skipped: plan.skipped,
    };
    const envelope = Buffer.from(JSON.stringify({ manifest, signature: signManifest(manifest, signingPkcs8) }), "utf8");
    const trailer = Buffer.alloc(16);
    trailer.writeBigUInt64BE(BigInt(offset), 0);
    trailer.writeUInt32BE(envelope.length, 8);
    TRAILER_MAGIC.copy(trailer, 12);
    await out.write(envelope, 0, envelope.length, offset);
    await out.write(trailer, 0, trailer.length, offset + envelope.length);
    await out.sync();
    await out.close();
    out = null;
    await input.step("rename");
    await rename(partial, target);
    syncFolder(dirname(target));
    return {
      path: target,
      bytes: offset + envelope.length + trailer.length,
      parts: entries.length,
      apps: plan.apps.map((a) => a.name),
      log_head: manifest.log.head,
    };
  } finally {
    await out?.close();
    await rm(partial, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}
