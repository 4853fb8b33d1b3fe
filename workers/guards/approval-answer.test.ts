import { describe, expect, it } from "vitest";
import { answerRefusal } from "./approval-answer";
import type { OwnerPrincipal, Principal } from "./principal";

const owner: OwnerPrincipal = { kind: "owner", sessionId: "s1", signedInAt: 0, via: "cookie" };
const asker = "app:asker";

describe("the approval answer rule", () => {
  it("lets an owner session answer, whether it came as cookie, Bearer or link", () => {
    for (const via of ["cookie", "bearer", "link"] as const) expect(answerRefusal({ ...owner, via }, asker)).toBeNull();
  });

  it("refuses the asker's own app token", () => {
    expect(answerRefusal({ kind: "app", app: "asker", tokenId: "t", narrows: null }, asker)).toBe("asker");
  });

  it("refuses another app's token alone", () => {
    expect(answerRefusal({ kind: "app", app: "other", tokenId: "t", narrows: null }, asker)).toBe("app_token");
  });

  it("refuses an app token that narrows an owner session", () => {
    expect(answerRefusal({ kind: "app", app: "other", tokenId: "t", narrows: owner }, asker)).toBe(
      "app_token_narrowing_owner",
    );
  });

  it("refuses the asker's token even beside an owner session", () => {
    expect(answerRefusal({ kind: "app", app: "asker", tokenId: "t", narrows: owner }, asker)).toBe("asker");
  });

  it("refuses the internal credential, whatever work it names, and as the asker", () => {
    expect(answerRefusal({ kind: "internal", work: "tool:reminders" }, asker)).toBe("internal_credential");
    expect(answerRefusal({ kind: "internal", work: "cli:approvals" }, asker)).toBe("internal_credential");
    expect(answerRefusal({ kind: "internal", work: "tool:reminders" }, "internal:tool:reminders")).toBe("asker");
  });

  it("refuses a caller with no credential", () => {
    expect(answerRefusal({ kind: "anonymous", refusal: null }, asker)).toBe("anonymous");
  });

  it("refuses the auth-off owner, which is every loopback caller", () => {
    expect(answerRefusal({ kind: "owner", sessionId: null, signedInAt: 0, via: "auth-off" }, asker)).toBe(
      "no_signed_in_session",
    );
  });

  it("refuses every principal kind but the owner session for an approval that does not exist", () => {
    const principals: Principal[] = [
      { kind: "app", app: "x", tokenId: "t", narrows: null },
      { kind: "internal", work: "w" },
      { kind: "anonymous", refusal: null },
    ];
    for (const p of principals) expect(answerRefusal(p, null)).not.toBeNull();
    expect(answerRefusal(owner, null)).toBeNull();
  });
});
