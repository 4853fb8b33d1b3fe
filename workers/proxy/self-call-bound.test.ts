// The bound on an app's own calls through its proxy.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { SELF_CALL_LIMIT, enterSelfCall, releasedWhenDone } from "./self-call-bound";

function codeOf(work: () => unknown): string | null {
  try {
    work();
    return null;
  } catch (error) {
    return error instanceof GatewayError ? error.code : "not a GatewayError";
  }
}

describe("an app's calls through its own proxy", () => {
  it("may nest up to the limit; the next is refused with app_proxy_loop, and a released slot is free again", () => {
    const slots = Array.from({ length: SELF_CALL_LIMIT }, (_, i) => {
      const slot = enterSelfCall("looper", 0);
      expect(slot.depth).toBe(i + 1);
      return slot;
    });
    expect(codeOf(() => enterSelfCall("looper", 0))).toBe("app_proxy_loop");
    expect(enterSelfCall("other-app", 0).depth).toBe(1);
    slots[3].release();
    slots[3].release();
    const again = enterSelfCall("looper", 0);
    expect(again.depth).toBe(SELF_CALL_LIMIT);
    for (const slot of [...slots, again]) slot.release();
    expect(enterSelfCall("looper", 0).depth).toBe(1);
  });

  it("forgets a slot held longer than ten minutes", () => {
    for (let i = 0; i < SELF_CALL_LIMIT; i++) enterSelfCall("stuck", 0);
    expect(codeOf(() => enterSelfCall("stuck", 1000))).toBe("app_proxy_loop");
    expect(enterSelfCall("stuck", 11 * 60 * 1000).depth).toBe(1);
  });

  it("releases when the answer's body ends or is cancelled, not before", async () => {
    let released = 0;
    const body = releasedWhenDone(new Response("hello").body, () => released++)!;
    expect(released).toBe(0);
    expect(await new Response(body).text()).toBe("hello");
    expect(released).toBe(1);
    const cancelled = releasedWhenDone(new Response("x".repeat(100_000)).body, () => released++)!;
    await cancelled.cancel();
    expect(released).toBe(2);
    releasedWhenDone(null, () => released++);
    expect(released).toBe(3);
  });
});
