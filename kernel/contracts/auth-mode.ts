// Exactly two auth modes (AUTH-01/02): `local_token` (default) and `none`. Any other value
// is not applied; the warning names what was asked for and what is in force.

export type AuthMode = "local_token" | "none";

/** The mode in force and, when the asked-for value was not applied, the sentence saying so. */
export function authModeInForce(env: { AUTH_MODE_REQUESTED: string }): { mode: AuthMode; warning: string | null } {
  const asked = env.AUTH_MODE_REQUESTED ?? "";
  if (asked === "none") return { mode: "none", warning: null };
  if (asked === "" || asked === "local_token") return { mode: "local_token", warning: null };
  return { mode: "local_token", warning: unappliedModeWarning(asked) };
}

/** The one sentence the gateway log and `doctor` both print for an unknown mode. */
export function unappliedModeWarning(asked: string): string {
  return `PERSONALCLAW_AUTH_MODE=${JSON.stringify(asked)} is not a mode and was not applied; local_token is in force.`;
}
