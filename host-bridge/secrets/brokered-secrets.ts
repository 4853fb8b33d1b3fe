// The secrets an app's egress broker writes into requests for it, never handed to the app
// (issue 38): each declared with `use` and delivered as a placeholder. What the broker holds is
// not the value but a way to read it: each read opens the app's sealed copy again, so a value
// the owner replaced applies at the next request, and one taken back is gone at the next. The
// same holds for where it goes: origins the owner sets for the copy apply at the next request,
// and the value opens only for an origin the copy is bound to when it is opened.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { secretDelivery, secretOrigins } from "../../kernel/contracts/secret-delivery";
import type { SecretConsumer } from "../../kernel/contracts/secrets";
import type { BrokeredSecret } from "../egress/secret-placeholders";
import { SecretStore, secretStorePaths } from "./secret-store";

/** The names of the app's secrets delivered as a placeholder (the others reach it as their value). */
export function placeholderSecretNames(manifest: AppManifest): Set<string> {
  return new Set(
    (manifest.secrets ?? []).filter((s) => s.use && secretDelivery(s) === "placeholder").map((s) => s.name),
  );
}

/**
 * The placeholder secrets assigned to this install now, each with a reader of its current value;
 * a copy that does not open for exactly this app and consent digest is left out and named in
 * `refused`, as at a start with the value.
 */
export function brokeredSecrets(
  store: SecretStore,
  consumer: SecretConsumer,
  manifest: AppManifest,
): { secrets: BrokeredSecret[]; refused: string[] } {
  const declared = (manifest.secrets ?? []).filter((s) => s.use && secretDelivery(s) === "placeholder");
  if (declared.length === 0) return { secrets: [], refused: [] };
  const opened = store.openAppSecrets(
    consumer,
    declared.map((s) => s.name),
  );
  const secrets = declared
    .filter((s) => opened.env[s.name] !== undefined)
    .map((s) => ({
      name: s.name,
      use: s.use!,
      origins: () => secretOrigins(s, store.slotOrigins(consumer.app, s.name) ?? undefined),
      read: (origin: string) => {
        try {
          const copy = store.openAppSecret(consumer, s.name);
          if (copy === null || copy === "refused") return null;
          const bound = secretOrigins(s, copy.origins ?? undefined).some((o) => o.origin === origin);
          return bound ? copy.value : null;
        } catch {
          return null;
        }
      },
    }));
  return { secrets, refused: opened.refused };
}

/**
 * For a process `mcp run` starts outside the bridge: the placeholder secrets its installed app
 * (the app.json the owner consented to, in `appDir`) was assigned, opened for that install.
 * An app.json that cannot be read or parsed brokers nothing.
 */
export function installedAppBrokeredSecrets(
  home: string,
  appDir: string,
  consumer: SecretConsumer,
): { secrets: BrokeredSecret[]; refused: string[] } {
  let manifest: AppManifest;
  try {
    const parsed = AppManifestSchema.safeParse(JSON.parse(readFileSync(join(appDir, "app.json"), "utf8")));
    if (!parsed.success) return { secrets: [], refused: [] };
    manifest = parsed.data;
  } catch {
    return { secrets: [], refused: [] };
  }
  return brokeredSecrets(new SecretStore(secretStorePaths(home)), consumer, manifest);
}
