// The one parse of Authorization and of the session cookie, case by case.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { parseAuthorization, sessionCookieHeaders, sessionCookieOf, subprotocolBearer } from "./credentials";

function refusalOf(value: string): string | null {
  try {
    parseAuthorization(value);
    return null;
  } catch (error) {
    return error instanceof GatewayError ? error.code : "not a GatewayError";
  }
}

describe("the Authorization parse", () => {
  it.each([
    ["Bearer abc.def", "abc.def"],
    ["bearer abc.def", "abc.def"],
    ["BEARER abc.def", "abc.def"],
    ["Bearer  abc.def", "abc.def"],
    ["Bearer a-b_c~d+e/f==", "a-b_c~d+e/f=="],
  ])("reads %j as one Bearer token", (value, token) => {
    expect(parseAuthorization(value)).toEqual({ kind: "bearer", token });
  });

  it.each([
    ["Bearer\tabc", "a tab after the scheme"],
    ["Bearer abc def", "two words"],
    ["Bearer abc, Bearer def", "two Authorization headers joined"],
    ["Bearer abc,def", "a comma in the token"],
    ["Bearer", "no token"],
    ["Bearer ", "an empty token"],
    ["Bearer abc=def", "= inside the token"],
    ['Bearer "abc"', "a quoted token"],
    ["", "an empty header"],
    ["   ", "a blank header"],
    ["Basic dXNlcjpwYXNz, Bearer abc", "a Bearer behind another scheme"],
    ["=abc", "no scheme"],
  ])("refuses %j (%s) with auth_header_malformed", (value) => {
    expect(refusalOf(value)).toBe("auth_header_malformed");
  });

  it("ignores another well-formed scheme (AUTH-14) and reads no header as none", () => {
    expect(parseAuthorization("Basic dXNlcjpwYXNz")).toEqual({ kind: "other-scheme" });
    expect(parseAuthorization('Digest username="a", realm="b"')).toEqual({ kind: "other-scheme" });
    expect(parseAuthorization(null)).toEqual({ kind: "none" });
  });
});

describe("the session cookie", () => {
  const port = "10000";
  it("reads the __Host- copy alone when the browser kept one, whatever fallback copies ride beside it", () => {
    expect(sessionCookieOf("pc_token_10000=planted; __Host-pc_token_10000=real; pc_token_10000=real", port)).toEqual({
      kind: "one",
      value: "real",
    });
  });
  it("falls back to pc_token_<port> when there is no __Host- copy", () => {
    expect(sessionCookieOf("other=1; pc_token_10000=tok", port)).toEqual({ kind: "one", value: "tok" });
    expect(sessionCookieOf("pc_token_9999=tok", port)).toEqual({ kind: "none" });
    expect(sessionCookieOf(null, port)).toEqual({ kind: "none" });
  });
  it("calls two copies of the name read a conflict", () => {
    expect(sessionCookieOf("pc_token_10000=planted; pc_token_10000=real", port)).toEqual({
      kind: "conflict",
      count: 2,
    });
    expect(sessionCookieOf("pc_token_10000=same; pc_token_10000=same", port)).toEqual({ kind: "conflict", count: 2 });
    expect(sessionCookieOf("__Host-pc_token_10000=a; __Host-pc_token_10000=b", port)).toEqual({
      kind: "conflict",
      count: 2,
    });
  });
  it("signs in with a __Host- cookie (Secure, Path=/, no Domain) and a fallback, and signs out by expiring both", () => {
    const [host, fallback] = sessionCookieHeaders(port, "tok", 60);
    expect(host).toBe("__Host-pc_token_10000=tok; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=60");
    expect(fallback).toBe("pc_token_10000=tok; HttpOnly; SameSite=Lax; Path=/; Max-Age=60");
    for (const cookie of sessionCookieHeaders(port, null, 60)) expect(cookie).toMatch(/^[^=]+=; .*Max-Age=0$/);
  });
});

describe("the events socket's subprotocol token", () => {
  it("reads the one personalclaw.bearer.<token> a socket offers beside the events protocol", () => {
    expect(subprotocolBearer("personalclaw.events.v1, personalclaw.bearer.abc_DEF-1.xyz")).toEqual({
      kind: "bearer",
      token: "abc_DEF-1.xyz",
    });
    expect(subprotocolBearer("personalclaw.events.v1")).toEqual({ kind: "none" });
    expect(subprotocolBearer(null)).toEqual({ kind: "none" });
  });

  it("refuses two tokens, and a token that is not one token", () => {
    for (const value of [
      "personalclaw.bearer.a, personalclaw.bearer.b",
      "personalclaw.bearer.",
      "personalclaw.bearer.a/b",
    ]) {
      expect(() => subprotocolBearer(value), value).toThrow(GatewayError);
    }
  });
});
