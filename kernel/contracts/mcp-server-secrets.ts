// A secret an app's stdio MCP server holds (issue 36): an env value of the server written
// `${secret:NAME}` names a secret the app declares with delivery `env`, and the server gets the
// value of the owner's assigned copy in that variable when it starts, nothing when none is
// assigned. The value is never written in app.json, the review or mcp.json: only the reference
// is, so the review can say "this server holds X" and the consent digest covers that it does.
// Imports nothing but zod (through its neighbours).
import { secretDelivery } from "./secret-delivery";
import { invalidField, type ManifestRefusal } from "./manifest-refusal";
import type { AppManifest } from "./manifest";

/** A whole env value that stands for a declared secret's value. */
const SECRET_REFERENCE = /^\$\{secret:([A-Z][A-Z0-9_]{0,63})\}$/;
/** Where a reference starts, whole or not: a partial one is refused, never left as text. */
const SECRET_MARK = "${secret:";

/** `${secret:NAME}`, the env value a generated app writes for a server that holds NAME. */
export function secretReference(name: string): string {
  return `${SECRET_MARK}${name}}`;
}

/** The secret an env value stands for, or null when it is a plain value. */
export function referencedSecret(value: string): string | null {
  return SECRET_REFERENCE.exec(value)?.[1] ?? null;
}

/** Each variable of a server that holds a secret, with the secret's name, sorted by variable. */
export function serverSecrets(server: { env?: Record<string, string> | undefined }): Array<{
  variable: string;
  secret: string;
}> {
  return Object.entries(server.env ?? {})
    .flatMap(([variable, value]) => {
      const secret = referencedSecret(value);
      return secret === null ? [] : [{ variable, secret }];
    })
    .sort((a, b) => (a.variable < b.variable ? -1 : a.variable > b.variable ? 1 : 0));
}

/**
 * A `${secret:NAME}` is a whole env value of a stdio server (never an argument, which any
 * process of the machine can read, nor part of a longer value), and NAME is a secret the app
 * declares that reaches it as its value: a placeholder secret goes through the broker instead.
 */
export function checkServerSecrets(m: AppManifest): ManifestRefusal | null {
  for (const [name, server] of Object.entries(m.mcpServers ?? {})) {
    for (const [i, arg] of (server.args ?? []).entries())
      if (arg.includes(SECRET_MARK))
        return invalidField(
          `mcpServers.${name}.args[${i}]`,
          "a secret is never an argument (any process can read a command line): name it in env",
        );
    for (const [variable, value] of Object.entries(server.env ?? {})) {
      if (!value.includes(SECRET_MARK)) continue;
      const field = `mcpServers.${name}.env.${variable}`;
      const named = referencedSecret(value);
      if (named === null) return invalidField(field, "a ${secret:NAME} must be the whole value");
      if ((server.transport ?? "stdio") !== "stdio") return invalidField(field, "only a stdio server holds a secret");
      const declared = (m.secrets ?? []).find((s) => s.name === named);
      if (!declared) return invalidField(field, `it names the secret ${named}, which secrets does not declare`);
      if (secretDelivery(declared) !== "env")
        return invalidField(
          field,
          `the secret ${named} is delivered as a placeholder its egress broker replaces; a server holds only a secret delivered as its value (delivery env)`,
        );
    }
  }
  return null;
}
