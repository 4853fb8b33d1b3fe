// The pinned package files an archive carries (docs/backup-and-restore.md, "Packages"), checked
// against their pins before a restore writes a byte. The manifest's SHA-256 proves a part is the
// byte the backup read; it does not prove that byte is the package the app's consent pinned — a
// wheel or tarball altered in the source home before the backup is carried faithfully. So each
// carried wheel is held to the sha256 its app's pypi-closure.json pins, and each tarball in an npm
// closure's kept cache to the integrity its cache path is addressed by (the one `npm ci` looks it
// up by, from the app's pinned lock): a mismatch is refused with the installer's own code, before
// anything is written and so before anything is installed.
import { createHash } from "node:crypto";
import { NPM_CLOSURE_FILE } from "../../kernel/contracts/npm-closure";
import { GatewayError } from "../../kernel/contracts/errors";
import { PypiClosureRecordSchema } from "../../kernel/contracts/pypi-closure";
import { parseStrictJson } from "../../kernel/text/strict-json";
import { NPM_CLOSURE_CACHE } from "../install/install-dependencies";
import { parseNpmClosure } from "../install/npm-closure-file";
import { packageWithIntegrity } from "../sources/npm-lockfile";
import { PYPI_CLOSURE_FILE } from "../sources/pypi-app";
import type { PartEntry } from "./archive-format";
import { invalid, type OpenedArchive } from "./archive-reader";

/** The digest algorithms npm's cache addresses content by (content-v2/<algo>/<hex in segments>). */
const CACHE_ALGORITHMS = new Set(["sha512", "sha384", "sha256", "sha1"]);

/** Where npm (`--cache <kept cache>`) keeps a tarball's bytes, by the digest of those bytes. */
const CACHED_CONTENT = new RegExp(
  `^node_modules/${NPM_CLOSURE_CACHE.replace(".", "\\.")}/(?:_cacache/)?content-v2/([^/]+)/(.+)$`,
);

async function digestOf(archive: OpenedArchive, key: Buffer, part: PartEntry, algorithm: string): Promise<Buffer> {
  const hash = createHash(algorithm);
  for await (const chunk of archive.openPart(key, part)) hash.update(chunk);
  return hash.digest();
}

async function textPart(archive: OpenedArchive, key: Buffer, part: PartEntry): Promise<string> {
  return (await archive.readPart(key, part)).toString("utf8");
}

/** Each carried wheel of `app` is a file its pypi-closure.json pins, with the sha256 it pins. */
async function checkWheels(archive: OpenedArchive, key: Buffer, app: string, wheels: PartEntry[]): Promise<void> {
  const record = archive.manifest.parts.find((p) => p.path === `apps/${app}/${PYPI_CLOSURE_FILE}`);
  // Wheels without a closure record are an app's own bytes, installed as any app's: nothing pins them.
  if (record === undefined) return;
  const json = parseStrictJson(await textPart(archive, key, record));
  const pins = PypiClosureRecordSchema.safeParse(json.ok ? json.value : undefined);
  if (!pins.success) throw invalid(`apps/${app}/${PYPI_CLOSURE_FILE} is not a wheel closure record`);
  for (const part of wheels) {
    const file = part.path.slice(`apps/${app}/wheels/`.length);
    const pin = pins.data.wheels.find((w) => w.file === file);
    if (pin === undefined) throw invalid(`${part.path} is not a wheel ${PYPI_CLOSURE_FILE} pins`);
    if ((await digestOf(archive, key, part, "sha256")).toString("hex") !== pin.sha256)
      throw new GatewayError("pypi_hash_mismatch", {
        vars: { file, sha256: pin.sha256 },
        detail: { app, file, step: "archive" },
      });
  }
}

/** Each tarball in `app`'s kept npm cache hashes to the integrity its path is addressed by. */
async function checkNpmCache(archive: OpenedArchive, key: Buffer, app: string, content: PartEntry[]): Promise<void> {
  const lock = archive.manifest.parts.find((p) => p.path === `apps/${app}/${NPM_CLOSURE_FILE}`);
  const closure = lock ? parseNpmClosure(await textPart(archive, key, lock)) : null;
  for (const part of content) {
    const [, algorithm, address] = CACHED_CONTENT.exec(part.path.slice(`apps/${app}/`.length))!;
    if (!CACHE_ALGORITHMS.has(algorithm!)) throw invalid(`${part.path} is not addressed by a digest npm uses`);
    const expected = address!.split("/").join("");
    const actual = await digestOf(archive, key, part, algorithm!);
    if (actual.toString("hex") === expected) continue;
    const integrity = `${algorithm}-${Buffer.from(expected, "hex").toString("base64")}`;
    const named = closure?.ok ? packageWithIntegrity(closure.closure, integrity) : null;
    throw new GatewayError("npm_integrity_mismatch", {
      vars: { package: named ?? "(a tarball in its kept cache)", integrity },
      detail: { app, package: named, integrity, step: "archive" },
    });
  }
}

/** Refuses an archive one of whose carried package files is not the file its app pins. */
export async function checkCarriedPackages(archive: OpenedArchive, key: Buffer): Promise<void> {
  const byApp = new Map<string, { wheels: PartEntry[]; cache: PartEntry[] }>();
  for (const part of archive.manifest.parts) {
    if (part.kind !== "app-file" || part.app === undefined) continue;
    const under = part.path.slice(`apps/${part.app}/`.length);
    const isWheel = under.startsWith("wheels/") && under.endsWith(".whl");
    const isCached = CACHED_CONTENT.test(under);
    if (!isWheel && !isCached) continue;
    const lists = byApp.get(part.app) ?? { wheels: [], cache: [] };
    (isWheel ? lists.wheels : lists.cache).push(part);
    byApp.set(part.app, lists);
  }
  for (const [app, { wheels, cache }] of byApp) {
    await checkWheels(archive, key, app, wheels);
    await checkNpmCache(archive, key, app, cache);
  }
}
