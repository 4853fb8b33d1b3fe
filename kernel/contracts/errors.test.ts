// A GatewayError reads as one in a log or a stack trace (its name) and keeps what it reports
// (its cause), while its envelope, what a caller receives, carries neither.
import { describe, expect, it } from "vitest";
import { GatewayError } from "./errors";

describe("GatewayError", () => {
  it("is named GatewayError, keeps the error it reports as its cause, and leaves both out of its envelope", () => {
    const refused = new Error("connect ECONNREFUSED 127.0.0.1:41234");
    const error = new GatewayError("bridge_unavailable", { vars: { reason: refused.message }, cause: refused });
    expect(error.name).toBe("GatewayError");
    expect(error.cause).toBe(refused);
    expect(String(error)).toMatch(/^GatewayError: /);
    expect(error.stack).toMatch(/^GatewayError: /);
    expect(Object.keys(error.toEnvelope().error).sort()).toEqual(["code", "message"]);
  });

  it("has no cause unless one is given", () => {
    const error = new GatewayError("app_not_found", { vars: { name: "notes" } });
    expect("cause" in error).toBe(false);
    expect(error.status).toBe(404);
  });
});
