// The secrets an app's MCP server holds (issue 36): each env value `${secret:NAME}` of its
// consented definition becomes the value of the app's sealed copy of NAME, opened for exactly
// this app and consent digest as a backend's are at its start. A secret not assigned (or whose
// copy does not open: moved, sealed for another install) leaves its variable unset; it is never
// started with the reference text as if it were a value. Nothing here writes a value anywhere:
// it lives in the environment handed to the server's spawn, masked in its relayed stderr.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { referencedSecret } from "../../kernel/contracts/mcp-server-secrets";
import { secretDelivery } from "../../kernel/contracts/secret-delivery";
import type { SecretConsumer } from "../../kernel/contracts/secrets";
import { SecretStore, secretStorePaths } from "./secret-store";

/** The secrets the installed app.json declares with delivery env: the only ones a server may hold. */
function valueSecretNames(appDir: string): Set<string> {
  try {
    const parsed = AppManifestSchema.safeParse(JSON.parse(readFileSync(join(appDir, "app.json"), "utf8")));
    if (!parsed.success) return new Set();
    return new Set((parsed.data.secrets ?? []).filter((s) => secretDelivery(s) === "env").map((s) => s.name));
  } catch {
    return new Set();
  }
}

/**
 * The server's declared environment with each secret it holds replaced by its value; a variable
 * whose secret is not assigned is left out, and one whose sealed copy does not open for this
 * install is left out and named in `refused`.
 */
export function serverHeldSecrets(
  home: string,
  appDir: string,
  consumer: SecretConsumer,
  declaredEnv: Readonly<Record<string, string>>,
): { env: Record<string, string>; refused: string[] } {
  const held = Object.entries(declaredEnv).flatMap(([variable, value]) => {
    const secret = referencedSecret(value);
    return secret === null ? [] : [{ variable, secret }];
  });
  if (held.length === 0) return { env: { ...declaredEnv }, refused: [] };
  const allowed = valueSecretNames(appDir);
  const names = [...new Set(held.map((h) => h.secret).filter((name) => allowed.has(name)))];
  const opened =
    names.length > 0
      ? new SecretStore(secretStorePaths(home)).openAppSecrets(consumer, names)
      : { env: {}, refused: [] as string[] };
  const env: Record<string, string> = { ...declaredEnv };
  for (const { variable, secret } of held) {
    const value = (opened.env as Record<string, string>)[secret];
    if (value === undefined) delete env[variable];
    else env[variable] = value;
  }
  return { env, refused: opened.refused };
}
