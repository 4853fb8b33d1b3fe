import { describe, expect, it } from "vitest";
import { consentGate, consentOutcome, consentQuestion, type SettingChange } from "./consent";

const sandboxOff: SettingChange = {
  field: "sandbox.mode",
  consent: "loosen_sandbox_mode",
  title: "Run app backends without the sandbox",
  from: "On",
  to: "Off",
};
const processes = (from: number, to: number): SettingChange => ({
  field: "sandbox.limits.processes",
  consent: "raise_sandbox_processes",
  title: "Let each app child run more processes",
  from: String(from),
  to: String(to),
  fromValue: from,
  toValue: to,
});
const ctx = (header?: string) => ({
  req: { header: (name: string) => (name.toLowerCase() === "x-personalclaw-consent" ? header : undefined) },
});

describe("the consent protocol", () => {
  it("asks with field, consent, title and the change from → to, and no caution for a small raise", () => {
    expect(consentQuestion(sandboxOff)).toEqual({
      field: "sandbox.mode",
      consent: "loosen_sandbox_mode",
      title: "Run app backends without the sandbox",
      change: "On → Off",
    });
    expect(consentQuestion(processes(256, 2559)).caution).toBeUndefined();
  });

  it("adds a caution when the new value is at least 10× the old, and the message carries change and caution", () => {
    const question = consentQuestion(processes(256, 2560));
    expect(question.caution).toMatch(/10× the value in effect/);
    const outcome = consentOutcome(processes(256, 2560), undefined, undefined);
    expect(outcome.proceed).toBe(false);
    if (outcome.proceed) return;
    expect(outcome.error.message).toContain("256 → 2560");
    expect(outcome.error.message).toContain(question.caution!);
  });

  it("refuses 400 confirmation_required without confirm: true, and also with confirm: false", () => {
    for (const confirm of [undefined, false]) {
      let thrown: unknown;
      try {
        consentGate(ctx(), sandboxOff, confirm);
      } catch (error) {
        thrown = error;
      }
      expect((thrown as { status: number; code: string }).status).toBe(400);
      expect((thrown as { code: string }).code).toBe("confirmation_required");
      expect((thrown as { detail: unknown }).detail).toEqual(consentQuestion(sandboxOff));
    }
  });

  it("answers the same body as 200 with X-PersonalClaw-Consent-Asked: 1 when the client sends X-PersonalClaw-Consent: ask", async () => {
    const answer = consentGate(ctx("ask"), sandboxOff, undefined)!;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-personalclaw-consent-asked")).toBe("1");
    const body = (await answer.json()) as { error: { code: string; detail: unknown } };
    expect(body.error.code).toBe("confirmation_required");
    expect(body.error.detail).toEqual(consentQuestion(sandboxOff));
  });

  it("lets the write go on with confirm: true, and asks nothing of a write that loosens nothing", () => {
    expect(consentGate(ctx("ask"), sandboxOff, true)).toBeNull();
    expect(consentGate(ctx(), null, undefined)).toBeNull();
  });
});
