// Step 3: who is asking. Every later decision keys off this one value.
import type { GatewayError } from "../../kernel/contracts/errors";

export type Principal =
  | { kind: "owner"; sessionId: string | null; signedInAt: number; via: "cookie" | "bearer" | "link" | "auth-off" }
  | { kind: "app"; app: string; tokenId: string; narrows: OwnerPrincipal | null }
  | { kind: "internal"; work: string }
  | { kind: "anonymous"; refusal: GatewayError | null };

export type OwnerPrincipal = Extract<Principal, { kind: "owner" }>;

/** The principal as the security log names it: owner, app:<name>, internal:<work>, anonymous. */
export function principalLabel(principal: Principal): string {
  switch (principal.kind) {
    case "owner":
      return "owner";
    case "app":
      return `app:${principal.app}`;
    case "internal":
      return principal.work.startsWith("cli") ? "cli" : `internal:${principal.work}`;
    case "anonymous":
      return "anonymous";
  }
}
