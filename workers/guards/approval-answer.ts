// The one rule that decides who may answer an approval (APPR-01..05), pure so every door
// applies the same words: only the owner's signed-in session answers. An app token (alone,
// or narrowing an owner session in an app's UI page), the internal credential (the
// gateway's own processes and anything that holds its secret), a caller with no credential,
// the auth-off owner (every loopback caller is "you" then, agent tools included) and the
// asker itself never do.
import type { Principal } from "./principal";
import { principalLabel } from "./principal";

export type AnswerRefusal =
  "app_token" | "app_token_narrowing_owner" | "internal_credential" | "anonymous" | "no_signed_in_session" | "asker";

/** Why `principal` may not answer an approval raised by `askedBy`, or null when it may. */
export function answerRefusal(principal: Principal, askedBy: string | null): AnswerRefusal | null {
  if (askedBy !== null && principalLabel(principal) === askedBy) return "asker";
  switch (principal.kind) {
    case "app":
      return principal.narrows === null ? "app_token" : "app_token_narrowing_owner";
    case "internal":
      return "internal_credential";
    case "anonymous":
      return "anonymous";
    case "owner":
      return principal.sessionId === null || principal.via === "auth-off" ? "no_signed_in_session" : null;
  }
}

/** The refusal as the 403's sentence says it. */
export const ANSWER_REFUSAL_TEXT: Record<AnswerRefusal, string> = {
  app_token: "an app's token answers nothing",
  app_token_narrowing_owner: "an app's token narrows the owner's session to the app, which answers nothing",
  internal_credential: "the internal credential answers nothing",
  anonymous: "the request carries no sign-in",
  no_signed_in_session: "an answer needs a signed-in session: open a link from `personalclaw token`",
  asker: "the asker can never answer its own approval",
};
