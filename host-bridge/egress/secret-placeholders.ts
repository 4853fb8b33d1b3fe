// The placeholders an app gets instead of the secrets it never holds (issue 38): one per
// secret, new at each start of the child, 192 random bits, so nothing the app saw at an
// earlier start and nothing it can guess is one. The broker of that start is the only thing
// that knows which placeholder stands for which secret.
import { randomBytes } from "node:crypto";
import { originVariable, type SecretOrigin, type SecretOriginUse } from "../../kernel/contracts/secret-delivery";

/** A secret the broker writes into requests for its app: where it goes, and how its value is read now. */
export interface BrokeredSecret {
  /** The variable the app finds the placeholder in (the manifest's secrets[].name). */
  name: string;
  use: SecretOriginUse;
  /** The origins it is written to at this moment: the owner may choose others while the child runs. */
  origins: () => readonly SecretOrigin[];
  /**
   * The value for a request to `origin` at this moment (a replaced value needs no restart);
   * null once it is no longer assigned, or no longer goes to that origin.
   */
  read: (origin: string) => string | null;
}

/** A brokered secret with the placeholder that stands for it during one start of the child. */
export interface PlacedSecret extends BrokeredSecret {
  placeholder: string;
}

/** A fresh placeholder: a fixed prefix (so a log reader knows what it is) and 192 random bits. */
export function newPlaceholder(): string {
  return `pc-placeholder-${randomBytes(24).toString("base64url")}`;
}

/**
 * A placeholder for each secret, and the variables the child gets: the secret's own name holds
 * its placeholder, PERSONALCLAW_ORIGIN_<name> the http:// base URL of its first origin.
 */
export function placeSecrets(secrets: readonly BrokeredSecret[]): {
  placed: PlacedSecret[];
  env: Record<string, string>;
} {
  const placed = secrets.map((secret) => ({ ...secret, placeholder: newPlaceholder() }));
  const env: Record<string, string> = {};
  for (const secret of placed) {
    env[secret.name] = secret.placeholder;
    const first = secret.origins()[0];
    if (first) env[originVariable(secret.name)] = first.plainBase;
  }
  return { placed, env };
}
