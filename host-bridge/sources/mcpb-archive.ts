// Reads an .mcpb bundle (a zip, perhaps with an MCPB signature block appended) from bytes held
// in memory, so what is hashed, read and written is one read of the file. Threats: an entry
// whose name climbs out of the folder it is unpacked into (`../x`, `/etc/x`, `C:\x`), a link
// entry (its target would be followed by whoever reads the folder), a device or pipe entry, an
// entry whose bytes inflate past what the archive declares (a zip bomb: yauzl refuses a stream
// longer than the declared size, and the declared sizes are capped before anything inflates),
// names two filesystems read as one (case, NFC/NFD), and bytes that do not match the archive's
// own CRC-32. Every refusal is a GatewayError with a stable code naming the entry.
import { crc32 } from "node:zlib";
import type yauzl from "yauzl";
import { GatewayError } from "../../kernel/contracts/errors";
import { isNeverInstalled } from "../staging/never-installed";
import { DEFAULT_STAGING_CAPS } from "../staging/survey-tree";

export interface McpbCaps {
  /** The .mcpb file itself. */
  maxBundleBytes: number;
  maxEntries: number;
  maxDepth: number;
  maxFileBytes: number;
  /** All entries unpacked, as the archive declares them (and no entry may inflate past its declaration). */
  maxTotalBytes: number;
}

/** What staging would accept anyway (survey-tree.ts), and a bundle file of at most 256 MiB. */
export const MCPB_CAPS: McpbCaps = {
  maxBundleBytes: 256 * 1024 * 1024,
  maxEntries: DEFAULT_STAGING_CAPS.maxEntries,
  maxDepth: DEFAULT_STAGING_CAPS.maxDepth,
  maxFileBytes: DEFAULT_STAGING_CAPS.maxFileBytes,
  maxTotalBytes: DEFAULT_STAGING_CAPS.maxTotalBytes,
};

export interface McpbFile {
  /** '/'-separated, relative, checked: no empty, `.` or `..` segment. */
  path: string;
  bytes: Buffer;
  /** The archive gives it an executable bit (a unix mode in its external attributes). */
  executable: boolean;
}

export interface McpbArchive {
  files: McpbFile[];
  /** The bytes before a signature block and the block's PKCS#7, when the bundle ends with one (mcpb-signature.ts verifies it). */
  signed: { zip: Buffer; block: Buffer } | null;
  unpackedBytes: number;
}

// The block `mcpb sign` appends: header, u32le length, PKCS#7 DER, footer (mcpb's src/node/sign.ts).
const SIGNATURE_HEADER = Buffer.from("MCPB_SIG_V1", "utf8");
const SIGNATURE_FOOTER = Buffer.from("MCPB_SIG_END", "utf8");
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const UNIX_HOST = 3;
const UTF8_NAME_FLAG = 0x800;
const utf8 = new TextDecoder("utf-8", { fatal: true });

const invalid = (reason: string) => new GatewayError("mcpb_archive_invalid", { vars: { reason } });
const refused = (path: string, reason: string) =>
  new GatewayError("mcpb_entry_refused", { vars: { path: JSON.stringify(path).slice(1, -1), reason } });
const tooLarge = (reason: string) => new GatewayError("mcpb_too_large", { vars: { reason } });

/**
 * Splits off a signature block that ends the file. A block whose framing does not add up is
 * refused: where the zip ends would then be a guess.
 */
export function splitSignatureBlock(file: Buffer): { zip: Buffer; block: Buffer | null } {
  if (file.length < SIGNATURE_FOOTER.length || !file.subarray(-SIGNATURE_FOOTER.length).equals(SIGNATURE_FOOTER))
    return { zip: file, block: null };
  const footerAt = file.length - SIGNATURE_FOOTER.length;
  const headerAt = file.lastIndexOf(SIGNATURE_HEADER, footerAt - 1);
  const lengthAt = headerAt + SIGNATURE_HEADER.length;
  if (headerAt < 0 || lengthAt + 4 > footerAt || file.readUInt32LE(lengthAt) !== footerAt - lengthAt - 4)
    throw invalid("it ends with a signature block whose framing is malformed");
  if (footerAt - lengthAt - 4 === 0) throw invalid("its signature block is empty");
  return { zip: file.subarray(0, headerAt), block: file.subarray(lengthAt + 4, footerAt) };
}

/** The entry's name as UTF-8 text, or a refusal: a name not flagged UTF-8 must be ASCII, read alike everywhere. */
function entryName(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  const shown = raw.toString("latin1");
  if ((entry.generalPurposeBitFlag & UTF8_NAME_FLAG) === 0 && raw.some((byte) => byte >= 0x80))
    throw refused(shown, "its name is neither UTF-8 (flagged) nor ASCII");
  try {
    return utf8.decode(raw);
  } catch {
    throw refused(shown, "its name is not UTF-8");
  }
}

/** A relative '/'-separated path that stays inside the folder it is unpacked into, or a refusal naming why. */
function checkedPath(name: string, isFolder: boolean, caps: McpbCaps): string {
  const path = isFolder ? name.replace(/\/$/, "") : name;
  // NUL and control characters forge log lines; a backslash is a separator on Windows.
  if (/[\u0000-\u001f\u007f-\u009f\\]/.test(name)) throw refused(name, "its name holds a control character or '\\'");
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) throw refused(name, "it is an absolute path");
  const segments = path.split("/");
  if (segments.includes("..")) throw refused(name, "it climbs out of the bundle ('..')");
  if (segments.some((s) => s === "" || s === ".")) throw refused(name, "it has an empty or '.' path segment");
  if (segments.length > caps.maxDepth) throw refused(name, `it is nested deeper than ${caps.maxDepth} folders`);
  return path;
}

/** The entry's kind from its external attributes: a unix mode when a unix host made it, a DOS folder bit otherwise. */
function entryKind(entry: yauzl.Entry, name: string): { folder: boolean; executable: boolean } {
  const isFolderName = name.endsWith("/");
  if (entry.versionMadeBy >> 8 !== UNIX_HOST) return { folder: isFolderName, executable: false };
  const mode = entry.externalFileAttributes >>> 16;
  const type = mode & S_IFMT;
  if (type === S_IFLNK) throw refused(name, "it is a symbolic link");
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) throw refused(name, "it is a device, pipe or socket");
  if ((type === S_IFDIR) !== isFolderName && type !== 0) throw refused(name, "its name and its type disagree");
  return { folder: isFolderName, executable: (type === S_IFREG || type === 0) && (mode & 0o111) !== 0 };
}

/** Names two filesystems could read as one (NFC/NFD, letter case), as survey-tree.ts judges them. */
function collisionKey(path: string): string {
  return path.normalize("NFC").toUpperCase().toLowerCase();
}

async function openZip(zip: Buffer): Promise<yauzl.ZipFile> {
  // Loaded on first use: only the commands that read a bundle compile yauzl.
  const { default: yauzlLib } = await import("yauzl");
  return new Promise((resolve, reject) =>
    yauzlLib.fromBuffer(
      zip,
      { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, strictFileNames: false },
      (error, zipfile) => (error ? reject(invalid(`it is not a zip archive (${error.message})`)) : resolve(zipfile)),
    ),
  );
}

/** Inflates one entry, refusing one that inflates past its declared size or whose bytes fail its CRC-32. */
function readEntry(zipfile: yauzl.ZipFile, entry: yauzl.Entry, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zipfile.openReadStream(entry, (error, stream) => {
      if (error) return reject(refused(path, `it cannot be inflated (${error.message})`));
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > entry.uncompressedSize) stream.destroy(refused(path, "it inflates past its declared size"));
        else chunks.push(chunk);
      });
      stream.on("error", (cause: Error) =>
        reject(cause instanceof GatewayError ? cause : refused(path, `it does not inflate (${cause.message})`)),
      );
      stream.on("end", () => {
        const bytes = Buffer.concat(chunks, size);
        if (crc32(bytes) >>> 0 !== entry.crc32 >>> 0) reject(refused(path, "its bytes do not match its CRC-32"));
        else resolve(bytes);
      });
    });
  });
}

/** Checks one central-directory entry and answers where it goes, or null for a folder or a never-installed name. */
function judgeEntry(
  entry: yauzl.Entry,
  caps: McpbCaps,
  seen: Map<string, string>,
  totals: { declared: number },
): { path: string; executable: boolean } | null {
  const name = entryName(entry);
  const kind = entryKind(entry, name);
  const path = checkedPath(name, kind.folder, caps);
  const key = collisionKey(path);
  const other = seen.get(key);
  if (other !== undefined) throw refused(path, `it names the same file as '${other}'`);
  seen.set(key, path);
  if (kind.folder || path.split("/").some(isNeverInstalled)) return null;
  if (entry.isEncrypted()) throw refused(path, "it is encrypted");
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    throw refused(path, `its compression method ${entry.compressionMethod} is not stored or deflate`);
  if (entry.uncompressedSize > caps.maxFileBytes)
    throw tooLarge(`'${path}' unpacks to more than ${caps.maxFileBytes} bytes`);
  totals.declared += entry.uncompressedSize;
  if (totals.declared > caps.maxTotalBytes) throw tooLarge(`it unpacks to more than ${caps.maxTotalBytes} bytes`);
  return { path, executable: kind.executable };
}

/** A file under a path another entry holds as a file (`a` and `a/b`) would need `a` to be both. */
function refuseFileFolderClash(files: readonly McpbFile[]): void {
  const keys = new Set(files.map((f) => collisionKey(f.path)));
  for (const file of files) {
    const parts = file.path.split("/");
    for (let i = 1; i < parts.length; i++)
      if (keys.has(collisionKey(parts.slice(0, i).join("/"))))
        throw refused(file.path, `'${parts.slice(0, i).join("/")}' is a file and a folder at once`);
  }
}

/** Reads every file of the bundle whole, within `caps`; throws a GatewayError naming what is refused. */
export async function readMcpbArchive(file: Buffer, caps: McpbCaps = MCPB_CAPS): Promise<McpbArchive> {
  if (file.length > caps.maxBundleBytes) throw tooLarge(`the file is larger than ${caps.maxBundleBytes} bytes`);
  const { zip, block } = splitSignatureBlock(file);
  const zipfile = await openZip(zip);
  if (zipfile.entryCount > caps.maxEntries) {
    zipfile.close();
    throw tooLarge(`it holds more than ${caps.maxEntries} entries`);
  }
  const files: McpbFile[] = [];
  const seen = new Map<string, string>();
  const totals = { declared: 0 };
  try {
    await new Promise<void>((resolve, reject) => {
      zipfile.on("error", (error: Error) => reject(invalid(error.message)));
      zipfile.on("end", () => resolve());
      zipfile.on("entry", (entry: yauzl.Entry) => {
        void (async () => {
          const target = judgeEntry(entry, caps, seen, totals);
          if (target !== null) files.push({ ...target, bytes: await readEntry(zipfile, entry, target.path) });
          zipfile.readEntry();
        })().catch(reject);
      });
      zipfile.readEntry();
    });
  } finally {
    zipfile.close();
  }
  refuseFileFolderClash(files);
  return { files, signed: block === null ? null : { zip, block }, unpackedBytes: totals.declared };
}
