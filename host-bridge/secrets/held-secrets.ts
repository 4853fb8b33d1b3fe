// What each backend was given of its secrets when it started, kept as a keyed hash and never as
// a value, so the owner can be told that an assignment (or a replaced value) changed since: its
// restart is pending. A placeholder secret is read again at every request by its egress broker,
// so it never waits for a restart and is not counted here.
import { createHmac, randomBytes } from "node:crypto";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { placeholderSecretNames } from "./brokered-secrets";
import type { SecretStore } from "./secret-store";

/** The secrets of `manifest` a backend holds the value of: the ones it gets only at its start. */
export function startHeldSecretNames(manifest: AppManifest): string[] {
  const brokered = placeholderSecretNames(manifest);
  return (manifest.secrets ?? []).map((s) => s.name).filter((as) => !brokered.has(as));
}

export class HeldSecrets {
  /** This process's own key: a hash of a value is worthless outside it. */
  private readonly key = randomBytes(32);
  private readonly atStart = new Map<string, string>();

  private fingerprint(env: Readonly<Record<string, string>>): string {
    const entries = Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return createHmac("sha256", this.key).update(JSON.stringify(entries)).digest("hex");
  }

  /** Records the secrets a backend of `app` is being started with. */
  started(app: string, env: Readonly<Record<string, string>>): void {
    this.atStart.set(app, this.fingerprint(env));
  }

  /**
   * True when the running backend of `app` holds other secrets than a start now would give it
   * (the copies that open for this app and consent digest now); false when nothing was recorded.
   */
  restartPending(app: string, store: SecretStore, manifest: AppManifest, digest: string | undefined): boolean {
    const recorded = this.atStart.get(app);
    if (recorded === undefined) return false;
    const names = startHeldSecretNames(manifest);
    const now = names.length === 0 || digest === undefined ? {} : store.openAppSecrets({ app, digest }, names).env;
    return recorded !== this.fingerprint(now);
  }
}
