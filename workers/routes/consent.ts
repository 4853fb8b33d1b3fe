// The owner-consent protocol for security-loosening writes (CONV-13/14), in one place: every
// write that loosens a security setting asks through consentGate before it writes anything.
// Without "confirm": true the write is refused 400 `confirmation_required` with the question
// in error.detail; a client that asks the owner itself sends `X-PersonalClaw-Consent: ask`
// and gets the same body as a 200 marked `X-PersonalClaw-Consent-Asked: 1` (a question,
// never a success). A write that only tightens asks nothing.
import { GatewayError } from "../../kernel/contracts/errors";

export const CONSENT_HEADER = "X-PersonalClaw-Consent";
export const CONSENT_ASKED_HEADER = "X-PersonalClaw-Consent-Asked";

/** A change a write would make to one security setting. */
export interface SettingChange {
  /** The setting's dotted name, e.g. `sandbox.mode`. */
  field: string;
  /** The stable name of the consent being asked, e.g. `loosen_sandbox_mode`. */
  consent: string;
  /** What the owner is asked, as a heading. */
  title: string;
  /** The value in effect and the new one, as the owner reads them ("On", "256"). */
  from: string;
  to: string;
  /** Numeric values, when the setting is a number: a raise of 10× or more carries a caution. */
  fromValue?: number;
  toValue?: number;
}

export interface ConsentQuestion {
  field: string;
  consent: string;
  title: string;
  change: string;
  caution?: string;
}

/** How many times the value in effect a raise must be to carry a caution. */
export const CAUTION_FACTOR = 10;

/** The question a loosening change asks: `change` is "from → to"; `caution` when the new value is ≥10× the old. */
export function consentQuestion(change: SettingChange): ConsentQuestion {
  const question: ConsentQuestion = {
    field: change.field,
    consent: change.consent,
    title: change.title,
    change: `${change.from} → ${change.to}`,
  };
  const { fromValue, toValue } = change;
  if (fromValue !== undefined && toValue !== undefined && fromValue > 0 && toValue >= CAUTION_FACTOR * fromValue) {
    const times = Math.floor((toValue / fromValue) * 10) / 10;
    question.caution = `This is ${times}× the value in effect (${change.from}); a mistyped number reads like this.`;
  }
  return question;
}

export type ConsentOutcome = { proceed: true } | { proceed: false; asked: boolean; error: GatewayError };

/**
 * Decides a loosening write: `change` null means it loosens nothing and proceeds. Otherwise it
 * proceeds only with `confirm === true`; else the refusal, answered as 200 when the client asked.
 */
export function consentOutcome(
  change: SettingChange | null,
  confirm: boolean | undefined,
  consentHeader: string | undefined,
): ConsentOutcome {
  if (change === null || confirm === true) return { proceed: true };
  const question = consentQuestion(change);
  const error = new GatewayError("confirmation_required", {
    vars: { title: question.title, change: question.change, caution: question.caution ? ` ${question.caution}` : "" },
    detail: question,
  });
  return { proceed: false, asked: consentHeader?.trim().toLowerCase() === "ask", error };
}

/**
 * The gate a loosening write calls before it writes: null to go on, or the answer to send
 * (the 200 question); throws the 400 refusal.
 */
export function consentGate(
  c: { req: { header: (name: string) => string | undefined } },
  change: SettingChange | null,
  confirm: boolean | undefined,
): Response | null {
  const outcome = consentOutcome(change, confirm, c.req.header(CONSENT_HEADER));
  if (outcome.proceed) return null;
  if (!outcome.asked) throw outcome.error;
  return new Response(JSON.stringify(outcome.error.toEnvelope()), {
    status: 200,
    headers: { "Content-Type": "application/json", [CONSENT_ASKED_HEADER]: "1" },
  });
}
