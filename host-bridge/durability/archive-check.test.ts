// A restore's checks against hostile archives, in-process with real crypto: an archive written by
// the product's own writer from a home and a log identity made here, then altered the ways an
// attacker could — a byte flipped, a manifest re-signed to send a part outside the home or
// where no part of its kind may go, a manifest signed by a key that is not the log's inside.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkpointBody,
  generateSigningKey,
  GENESIS_ROOT,
  importSigningKey,
  originOf,
  signNote,
  toBase64,
  verifierKey,
} from "../../kernel/chain/checkpoint";
import type { GatewayStateExport } from "../../kernel/contracts/durability";
import { GatewayError } from "../../kernel/contracts/errors";
import { EnvelopeSchema, TRAILER_MAGIC, type Manifest } from "./archive-format";
import { checkArchive } from "./archive-check";
import { signManifest } from "./archive-signature";
import { writeArchive } from "./archive-writer";

const PASSPHRASE = "the unit suite's passphrase";
const empty = { tables: [], indexes: [] };

/** A log identity and the export of an empty log with a checkpoint at seq 0, signed by it. */
async function logOf(logId: string) {
  const { pkcs8, publicRaw } = await generateSigningKey();
  const origin = originOf(logId);
  const key = await importSigningKey(origin, pkcs8, publicRaw);
  const mac = "0".repeat(64);
  const body = checkpointBody({ origin, seq: 0, root: toBase64(GENESIS_ROOT), mac, time: new Date().toISOString() });
  const publicKey = await verifierKey(origin, publicRaw);
  const checkpoint = { note: await signNote(body, key), public_key: publicKey, origin, seq: 0, row_seq: 0 };
  const state: GatewayStateExport = {
    stores: {
      SessionStore: empty,
      AppRegistry: empty,
      ApprovalStore: empty,
      EventHub: empty,
      SecurityLog: {
        tables: [
          {
            name: "log_identity",
            sql: "CREATE TABLE log_identity (id INTEGER PRIMARY KEY, log_id TEXT, signing_pkcs8 TEXT, public_key TEXT)",
            columns: ["id", "log_id", "signing_pkcs8", "public_key"],
            rows: [[1, logId, toBase64(pkcs8), toBase64(publicRaw)]],
          },
        ],
        indexes: [],
        log: { head: { seq: 0, mac }, checkpoint },
      },
    },
  };
  return { state, pkcs8: toBase64(pkcs8) };
}

/** Rewrites the archive's manifest, signed with `pkcs8`; the parts stay as they are. */
function rewriteManifest(path: string, to: string, change: (m: Manifest) => Manifest, pkcs8: string): void {
  const bytes = readFileSync(path);
  const at = Number(bytes.readBigUInt64BE(bytes.length - 16));
  const envelope = EnvelopeSchema.parse(JSON.parse(bytes.subarray(at, bytes.length - 16).toString("utf8")));
  const manifest = change(structuredClone(envelope.manifest));
  const text = Buffer.from(JSON.stringify({ manifest, signature: signManifest(manifest, pkcs8) }));
  const trailer = Buffer.alloc(16);
  trailer.writeBigUInt64BE(BigInt(at), 0);
  trailer.writeUInt32BE(text.length, 8);
  TRAILER_MAGIC.copy(trailer, 12);
  writeFileSync(to, Buffer.concat([bytes.subarray(0, at), text, trailer]));
}

async function refusal(path: string, passphrase = PASSPHRASE): Promise<{ code: string; message: string }> {
  try {
    const checked = await checkArchive(path, passphrase);
    await checked.archive.close();
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, message: error.message };
    throw error;
  }
  return { code: "accepted", message: "" };
}

describe("a restore's checks refuse a hostile archive before anything is written", () => {
  let root: string;
  let archive: string;
  let pkcs8: string;
  let other: Awaited<ReturnType<typeof logOf>>;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "pc-archive-check-"));
    const home = join(root, "home");
    mkdirSync(join(home, "apps", "demo", "data"), { recursive: true });
    writeFileSync(join(home, "apps", "demo", "app.json"), '{"name":"demo","version":"1.0.0"}');
    writeFileSync(join(home, "apps", "demo", "data", "notes.txt"), "a note");
    writeFileSync(join(home, "config.json"), "{}");
    const log = await logOf("11111111-1111-4111-8111-111111111111");
    pkcs8 = log.pkcs8;
    other = await logOf("22222222-2222-4222-8222-222222222222");
    archive = join(root, "home.pcbackup");
    await writeArchive(archive, {
      home,
      state: log.state,
      passphrase: PASSPHRASE,
      version: "test",
      step: async () => undefined,
    });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("accepts the archive as written", async () => {
    expect(await refusal(archive)).toEqual({ code: "accepted", message: "" });
  });

  it("refuses a wrong passphrase with archive_passphrase_wrong", async () => {
    expect((await refusal(archive, "not the passphrase")).code).toBe("archive_passphrase_wrong");
  });

  it("refuses a byte flipped in a part", async () => {
    const bytes = readFileSync(archive);
    bytes[40] = bytes[40]! ^ 1;
    writeFileSync(join(root, "flipped"), bytes);
    expect(await refusal(join(root, "flipped"))).toMatchObject({ code: "archive_invalid" });
  });

  it("refuses a manifest re-signed by the log's own key to send a part outside the home", async () => {
    const to = join(root, "outside");
    rewriteManifest(
      archive,
      to,
      (m) => ({ ...m, parts: m.parts.map((p) => (p.path === "config.json" ? { ...p, path: "../escaped" } : p)) }),
      pkcs8,
    );
    const refused = await refusal(to);
    expect(refused.code).toBe("archive_invalid");
    expect(refused.message).toContain("not allowed");
  });

  it("refuses a manifest re-signed to put an app's file where no part of its kind may go", async () => {
    const to = join(root, "misplaced");
    rewriteManifest(
      archive,
      to,
      (m) => ({
        ...m,
        parts: m.parts.map((p) =>
          p.path === "apps/demo/app.json" ? { ...p, kind: "home-file", path: "journal/demo.json" } : p,
        ),
      }),
      pkcs8,
    );
    const refused = await refusal(to);
    expect(refused.code).toBe("archive_invalid");
    expect(refused.message).toContain("where no part may");
  });

  it("refuses a manifest signed by a key that is not the log's inside, even with that key's own valid checkpoint", async () => {
    const to = join(root, "foreign-key");
    rewriteManifest(archive, to, (m) => ({ ...m, log: other.state.stores.SecurityLog.log }), other.pkcs8);
    const refused = await refusal(to);
    expect(refused.code).toBe("archive_invalid");
    expect(refused.message).toContain("not the log that signed");
  });

  it("refuses a manifest edited without being signed again", async () => {
    const to = join(root, "unsigned-edit");
    const bytes = readFileSync(archive);
    const at = Number(bytes.readBigUInt64BE(bytes.length - 16));
    const text = bytes
      .subarray(at, bytes.length - 16)
      .toString("utf8")
      .replace('"gateway_version":"test"', '"gateway_version":"tset"');
    writeFileSync(to, Buffer.concat([bytes.subarray(0, at), Buffer.from(text), bytes.subarray(bytes.length - 16)]));
    const refused = await refusal(to);
    expect(refused.code).toBe("archive_invalid");
    expect(refused.message).toContain("signature");
  });
});

describe("a carried package file that is not the one its app pins is refused before anything is written", () => {
  let root: string;
  const WHEEL = "pc_words-1.0.0-py3-none-any.whl";
  const wheelBytes = Buffer.from("a wheel's bytes, as the index served them");
  const tarball = Buffer.from("a tarball's bytes, as the registry served them");
  const sha512 = createHash("sha512").update(tarball).digest();
  const integrity = `sha512-${sha512.toString("base64")}`;
  const hex = sha512.toString("hex");
  const cached = join("node_modules", ".personalclaw-npm-cache", "_cacache", "content-v2", "sha512", hex.slice(0, 2));

  /** A home with a generated Python app (wheels/ pinned by pypi-closure.json) and an npm closure's kept cache, then `alter`ed, archived. */
  async function archiveOf(name: string, alter: (home: string) => void = () => undefined): Promise<string> {
    const home = join(root, name);
    const words = join(home, "apps", "pc-words");
    mkdirSync(join(words, "wheels"), { recursive: true });
    writeFileSync(join(words, "app.json"), '{"name":"pc-words","version":"1.0.0"}');
    writeFileSync(join(words, "wheels", WHEEL), wheelBytes);
    const pin = { name: "pc-words", version: "1.0.0", file: WHEEL, url: "http://127.0.0.2/w.whl", size: 42 };
    writeFileSync(
      join(words, "pypi-closure.json"),
      JSON.stringify({
        source: "pypi:pc-words==1.0.0",
        index: "http://127.0.0.2/simple/",
        wheels: [{ ...pin, sha256: createHash("sha256").update(wheelBytes).digest("hex") }],
      }),
    );
    const server = join(home, "apps", "pc-server");
    mkdirSync(join(server, cached, hex.slice(2, 4)), { recursive: true });
    writeFileSync(join(server, "app.json"), '{"name":"pc-server","version":"1.0.0"}');
    writeFileSync(join(server, cached, hex.slice(2, 4), hex.slice(4)), tarball);
    const registry = "http://127.0.0.1:4873/";
    writeFileSync(
      join(server, "npm-closure.json"),
      JSON.stringify({
        registry,
        root: { name: "pc-server", version: "1.0.0" },
        packages: [
          {
            path: "node_modules/pc-server",
            name: "pc-server",
            version: "1.0.0",
            resolved: `${registry}pc-server/-/pc-server-1.0.0.tgz`,
            integrity,
            size: tarball.length,
            native: false,
          },
        ],
      }),
    );
    alter(home);
    const log = await logOf("33333333-3333-4333-8333-333333333333");
    const path = join(root, `${name}.pcbackup`);
    await writeArchive(path, {
      home,
      state: log.state,
      passphrase: PASSPHRASE,
      version: "test",
      step: async () => undefined,
    });
    return path;
  }

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "pc-archive-carried-"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("accepts wheels and cached tarballs that are the pinned bytes", async () => {
    expect(await refusal(await archiveOf("whole"))).toEqual({ code: "accepted", message: "" });
  });

  it("a wheel altered in the home before the backup (its part matches the manifest) is refused pypi_hash_mismatch", async () => {
    const archive = await archiveOf("wheel-altered", (home) =>
      writeFileSync(
        join(home, "apps", "pc-words", "wheels", WHEEL),
        Buffer.from("a wheel's bytes, as someone changed them"),
      ),
    );
    const refused = await refusal(archive);
    expect(refused.code).toBe("pypi_hash_mismatch");
    expect(refused.message).toContain(WHEEL);
  });

  it("a wheel no closure record pins is refused archive_invalid", async () => {
    const archive = await archiveOf("wheel-unpinned", (home) =>
      writeFileSync(join(home, "apps", "pc-words", "wheels", "other-1.0-py3-none-any.whl"), "an extra wheel"),
    );
    expect(await refusal(archive)).toMatchObject({ code: "archive_invalid" });
  });

  it("a cached tarball whose bytes are not the integrity npm looks it up by is refused npm_integrity_mismatch, naming the package", async () => {
    const archive = await archiveOf("tarball-altered", (home) =>
      writeFileSync(
        join(home, "apps", "pc-server", cached, hex.slice(2, 4), hex.slice(4)),
        Buffer.from("a tarball's bytes, as someone changed them"),
      ),
    );
    const refused = await refusal(archive);
    expect(refused.code).toBe("npm_integrity_mismatch");
    expect(refused.message).toContain("pc-server@1.0.0");
  });
});
