// The owner's secrets at rest, sealed with AES-256-GCM under one key in the home
// (<home>/secrets.key, 32 random bytes, 0600). Threat: a file copied out of the home, or one
// app's sealed value copied into another app's slot. Each sealed value carries associated data
// naming what it is for — the store's own copy is bound to its name, an app's copy to the app's
// name, the consent digest of its install and the variable it arrives as — so a ciphertext moved
// anywhere else fails authentication and decrypts for nobody. Values never leave this module
// except as a backend's environment at its start (openAppSecrets).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  OwnerSecretOriginsSchema,
  SECRET_NAME,
  type SecretConsumer,
  type SecretListing,
} from "../../kernel/contracts/secrets";
import { makePrivateFolder, removePrivateFile, syncFolder, writePrivateFile } from "../private-file";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { readPrivateRecord } from "../private-record";

const KEY_BYTES = 32;
const NONCE_BYTES = 12;

/** One sealed value on disk: base64 nonce and ciphertext with its tag appended. No value, no key. */
const SealedFileSchema = z.object({
  v: z.literal(1),
  alg: z.literal("aes-256-gcm"),
  /** For an app's slot: the stored secret it was sealed from (a name, for the listing). */
  secret: z.string().regex(SECRET_NAME).optional(),
  /** For an app's slot of a placeholder secret: the origins the owner set in place of the declared ones. */
  origins: OwnerSecretOriginsSchema.optional(),
  nonce: z.string().max(64),
  sealed: z.string().max(20_000),
});
type SealedFile = z.infer<typeof SealedFileSchema>;

export interface SecretStorePaths {
  key: string;
  store: string;
  apps: string;
}

export function secretStorePaths(home: string): SecretStorePaths {
  return { key: join(home, "secrets.key"), store: join(home, "secrets", "store"), apps: join(home, "secrets", "apps") };
}

/** The associated data of the store's own copy of a secret. */
function storeBinding(name: string): Buffer {
  return Buffer.from(`personalclaw-secret\0store\0${name}`, "utf8");
}

/**
 * The associated data of an app's copy: the app, the consent digest of its install, the
 * variable, and the origins the owner set for it (so an origin written into the file by hand
 * makes the copy open for nobody, never send the value somewhere new).
 */
export function appBinding(consumer: SecretConsumer, as: string, origins?: readonly string[]): Buffer {
  const base = `personalclaw-secret\0app\0${consumer.app}\0${consumer.digest}\0${as}`;
  return Buffer.from(origins ? `${base}\0origins\0${origins.join("\n")}` : base, "utf8");
}

/** What an app's copy holds besides its value: the stored secret's name and the owner's origins. */
interface SlotLabels {
  secret?: string | undefined;
  origins?: readonly string[] | undefined;
}

function seal(key: Buffer, value: string, binding: Buffer, labels: SlotLabels = {}): SealedFile {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(binding);
  const sealed = Buffer.concat([cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return {
    v: 1,
    alg: "aes-256-gcm",
    ...(labels.secret ? { secret: labels.secret } : {}),
    ...(labels.origins ? { origins: [...labels.origins] } : {}),
    nonce: nonce.toString("base64"),
    sealed: sealed.toString("base64"),
  };
}

/** The value, or null when the file was sealed for anything but `binding` (or was altered). */
function open(key: Buffer, file: SealedFile, binding: Buffer): string | null {
  try {
    const bytes = Buffer.from(file.sealed, "base64");
    if (bytes.length < 16) return null;
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(file.nonce, "base64"));
    decipher.setAAD(binding);
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

function unreadable(reason: string): GatewayError {
  return new GatewayError("secret_store_unreadable", { vars: { reason } });
}

/** A plain file, never followed through a link someone planted in the home. */
function readSealed(path: string): SealedFile | null {
  // An unreadable or altered file opens for nobody, and breaks no listing.
  return readPrivateRecord(path, SealedFileSchema);
}

function writeSealed(path: string, file: SealedFile): void {
  writePrivateFile(path, `${JSON.stringify(file)}\n`);
}

export class SecretStore {
  private key: Buffer | null = null;
  /** The owner's origins of each slot as last read, with the file's identity then: a request reads a file only when it changed. */
  private readonly originsRead = new Map<string, { stamp: string; origins: string[] | null }>();

  constructor(private readonly paths: SecretStorePaths) {}

  /** The key, created on first use (0600); a key file of the wrong size is a refusal, never replaced. */
  private keyOf(create: boolean): Buffer | null {
    if (this.key) return this.key;
    if (existsSync(this.paths.key)) {
      const key = readFileSync(this.paths.key);
      if (key.length !== KEY_BYTES)
        throw unreadable(`${this.paths.key} holds ${key.length} bytes, not ${KEY_BYTES}; restore it`);
      this.key = key;
      return key;
    }
    if (!create) return null;
    // A key lost while sealed values remain must not be silently replaced: they would never open again.
    if (this.storedNames().length > 0)
      throw unreadable(`${this.paths.key} is missing but sealed secrets remain; restore the key file`);
    // Durable (flushed, and the home's entry for it) before any sealed value that needs it is
    // even staged: a power cut can leave a key without secrets, never secrets without their key.
    const key = randomBytes(KEY_BYTES);
    writePrivateFile(this.paths.key, key);
    this.key = key;
    return key;
  }

  private ensureFolders(): void {
    for (const dir of [this.paths.store, this.paths.apps]) makePrivateFolder(dir);
  }

  private storeFile(name: string): string {
    return join(this.paths.store, `${name}.json`);
  }

  private slotFile(app: string, as: string): string {
    return join(this.paths.apps, app, `${as}.json`);
  }

  storedNames(): string[] {
    if (!existsSync(this.paths.store)) return [];
    return readdirSync(this.paths.store)
      .filter((f) => f.endsWith(".json") && SECRET_NAME.test(f.slice(0, -5)))
      .map((f) => f.slice(0, -5))
      .sort();
  }

  /** Every app slot: which app holds which stored secret under which variable name, and the origins the owner set. */
  private slots(): Array<{ app: string; as: string; secret: string | null; origins?: string[] }> {
    if (!existsSync(this.paths.apps)) return [];
    const out: Array<{ app: string; as: string; secret: string | null; origins?: string[] }> = [];
    for (const app of readdirSync(this.paths.apps)
      .filter((a) => APP_NAME_PATTERN.test(a))
      .sort()) {
      const dir = join(this.paths.apps, app);
      if (!lstatSync(dir).isDirectory()) continue;
      for (const f of readdirSync(dir).sort()) {
        if (!f.endsWith(".json") || !SECRET_NAME.test(f.slice(0, -5))) continue;
        const sealed = readSealed(join(dir, f));
        out.push({
          app,
          as: f.slice(0, -5),
          secret: sealed?.secret ?? null,
          ...(sealed?.origins ? { origins: sealed.origins } : {}),
        });
      }
    }
    return out;
  }

  /** Names, presence and consumers only (SECR-01). */
  list(): SecretListing {
    const slots = this.slots();
    const names = new Set([...this.storedNames(), ...slots.flatMap((s) => (s.secret ? [s.secret] : []))]);
    const stored = new Set(this.storedNames());
    return {
      secrets: [...names].sort().map((name) => ({
        name,
        stored: stored.has(name),
        used_by: slots
          // eslint-disable-next-line no-restricted-syntax -- `secret` here is the secret's name, not its value
          .filter((s) => s.secret === name)
          .map((s) => ({ app: s.app, as: s.as, ...(s.origins ? { origins: s.origins } : {}) })),
      })),
    };
  }

  /** Stores or replaces a secret; a replaced value is sealed again for every app it is assigned to. */
  put(name: string, value: string, consumers: readonly SecretConsumer[]): { replaced: boolean; resealed: number } {
    const key = this.keyOf(true)!;
    this.ensureFolders();
    const replaced = existsSync(this.storeFile(name));
    writeSealed(this.storeFile(name), seal(key, value, storeBinding(name)));
    const digestOf = new Map(consumers.map((c) => [c.app, c.digest]));
    let resealed = 0;
    for (const slot of this.slots()) {
      // eslint-disable-next-line no-restricted-syntax -- `secret` here is the secret's name, not its value
      if (slot.secret !== name) continue;
      const digest = digestOf.get(slot.app);
      // An app no longer installed keeps no copy.
      if (digest === undefined) {
        removePrivateFile(this.slotFile(slot.app, slot.as));
        continue;
      }
      writeSealed(
        this.slotFile(slot.app, slot.as),
        seal(key, value, appBinding({ app: slot.app, digest }, slot.as, slot.origins), {
          secret: name,
          origins: slot.origins,
        }),
      );
      resealed += 1;
    }
    return { replaced, resealed };
  }

  /** Deletes a secret and every app's copy of it; answers the apps that lost it. */
  delete(name: string): { deleted: boolean; unassigned: Array<{ app: string; as: string }> } {
    const deleted = existsSync(this.storeFile(name));
    const unassigned: Array<{ app: string; as: string }> = [];
    for (const slot of this.slots()) {
      // eslint-disable-next-line no-restricted-syntax -- `secret` here is the secret's name, not its value
      if (slot.secret !== name) continue;
      removePrivateFile(this.slotFile(slot.app, slot.as));
      unassigned.push({ app: slot.app, as: slot.as });
    }
    removePrivateFile(this.storeFile(name));
    return { deleted, unassigned };
  }

  /**
   * Seals a stored secret for one app under the variable name it declared, with the origins
   * the owner chose for it (checked by the gateway against the app's grant), if any.
   */
  assign(name: string, as: string, consumer: SecretConsumer, origins?: readonly string[]): void {
    const key = this.keyOf(false);
    const file = readSealed(this.storeFile(name));
    if (!key || !file) throw new GatewayError("secret_not_found", { vars: { name } });
    const value = open(key, file, storeBinding(name));
    if (value === null) throw unreadable(`the stored copy of ${name} does not authenticate`);
    makePrivateFolder(join(this.paths.apps, consumer.app));
    writeSealed(
      this.slotFile(consumer.app, as),
      seal(key, value, appBinding(consumer, as, origins), { secret: name, origins }),
    );
  }

  unassign(app: string, as: string): boolean {
    return removePrivateFile(this.slotFile(app, as));
  }

  /**
   * An uninstalled app keeps no copy of anything; answers the assignments taken back (the name
   * the app knew each by and the owner's stored secret, which stays).
   */
  forgetApp(app: string): Array<{ as: string; secret: string | null }> {
    if (!APP_NAME_PATTERN.test(app) || !existsSync(join(this.paths.apps, app))) return [];
    const takenBack = this.slots()
      .filter((s) => s.app === app)
      .map((s) => ({ as: s.as, secret: s.secret }));
    rmSync(join(this.paths.apps, app), { recursive: true, force: true });
    syncFolder(this.paths.apps);
    return takenBack;
  }

  /**
   * After an update the owner consented to: each copy the new manifest still declares is opened
   * under the old digest and sealed under the new one; the rest are removed.
   */
  rebind(
    app: string,
    fromDigest: string,
    toDigest: string,
    declared: readonly string[],
  ): { rebound: string[]; dropped: string[] } {
    const key = this.keyOf(false);
    const rebound: string[] = [];
    const dropped: string[] = [];
    for (const slot of this.slots().filter((s) => s.app === app)) {
      const path = this.slotFile(app, slot.as);
      const file = readSealed(path);
      // Already sealed to the new digest: a settlement repeating a rebind a dead request made.
      if (
        key &&
        file &&
        declared.includes(slot.as) &&
        open(key, file, appBinding({ app, digest: toDigest }, slot.as, file.origins)) !== null
      ) {
        rebound.push(slot.as);
        continue;
      }
      const value =
        key && file && declared.includes(slot.as)
          ? open(key, file, appBinding({ app, digest: fromDigest }, slot.as, file.origins))
          : null;
      if (value === null) {
        removePrivateFile(path);
        dropped.push(slot.as);
        continue;
      }
      // The origins the owner chose stay theirs across an update; the broker still reaches only what the new grant allows.
      writeSealed(
        path,
        seal(key!, value, appBinding({ app, digest: toDigest }, slot.as, file!.origins), {
          secret: file!.secret,
          origins: file!.origins,
        }),
      );
      rebound.push(slot.as);
    }
    return { rebound, dropped };
  }

  /**
   * The environment an app's backend gets at its start: each declared variable whose copy opens
   * for exactly this app and digest. A copy that does not (moved from another app, sealed for an
   * earlier install, altered) is left out and named in `refused`.
   */
  openAppSecrets(
    consumer: SecretConsumer,
    declared: readonly string[],
  ): { env: Record<string, string>; refused: string[] } {
    const env: Record<string, string> = {};
    const refused: string[] = [];
    for (const as of declared) {
      const copy = this.openAppSecret(consumer, as);
      if (copy === "refused") refused.push(as);
      else if (copy !== null) env[as] = copy.value;
    }
    return { env, refused };
  }

  /**
   * Where the owner sent one app's copy, as its file says (null: the declared origins), for
   * routing a request; the value itself opens only under these same origins (openAppSecret).
   */
  slotOrigins(app: string, as: string): string[] | null {
    const path = this.slotFile(app, as);
    let stamp: string;
    try {
      const st = lstatSync(path, { bigint: true });
      stamp = `${st.ino}:${st.mtimeNs}:${st.size}`;
    } catch {
      return null;
    }
    const known = this.originsRead.get(path);
    if (known?.stamp === stamp) return known.origins;
    const origins = readSealed(path)?.origins ?? null;
    this.originsRead.set(path, { stamp, origins });
    return origins;
  }

  /**
   * One copy of an app's: its value and the origins the owner set for it (null: the declared
   * ones), when it opens for exactly this app and digest; "refused" when a copy is there but
   * does not; null when there is none.
   */
  openAppSecret(
    consumer: SecretConsumer,
    as: string,
  ): { value: string; origins: readonly string[] | null } | "refused" | null {
    if (!SECRET_NAME.test(as)) return null;
    const path = this.slotFile(consumer.app, as);
    if (!existsSync(path)) return null;
    const key = this.keyOf(false);
    const file = readSealed(path);
    const value = key && file ? open(key, file, appBinding(consumer, as, file.origins)) : null;
    return value === null ? "refused" : { value, origins: file!.origins ?? null };
  }
}
