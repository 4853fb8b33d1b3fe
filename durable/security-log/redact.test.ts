import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../kernel/crypto/canonical-json";
import { isCredentialKey, MAX_TEXT_CHARS, REDACTED, redactDetail, redactSubject, WITHHELD } from "./redact";

describe("credential keys", () => {
  it.each([
    "token",
    "TOKEN",
    "secret",
    "password",
    "cookie",
    "Authorization",
    "signature",
    "key",
    "api_key",
    "apiKey",
    "app_token",
    "X-Internal-Secret",
    "x-local-secret",
    "X-PersonalClaw-Proxy",
    "session_token",
    "proxySecret",
    "set-cookie",
    "db_password_hint",
  ])("'%s' names a credential", (key) => {
    expect(isCredentialKey(key)).toBe(true);
  });

  it.each(["token_kind", "key_id", "keyboard", "monkey", "path", "reason", "kind"])("'%s' does not", (key) => {
    expect(isCredentialKey(key)).toBe(false);
  });

  it("masks every value under a credential key, at any depth, in arrays too", () => {
    const detail: JsonObject = {
      headers: { Authorization: "anything at all", "X-Internal-Secret": "s3", accept: "json" },
      list: [{ app_token: 12345 }, { cookie: { nested: "x" } }],
      has_token: true,
      token: null,
    };
    expect(redactDetail(detail)).toEqual({
      headers: { Authorization: REDACTED, "X-Internal-Secret": REDACTED, accept: "json" },
      list: [{ app_token: REDACTED }, { cookie: REDACTED }],
      has_token: true,
      token: null,
    });
  });
});

describe("shapes in a detail", () => {
  it("are masked in values and keys", () => {
    const hex = "f".repeat(40);
    expect(redactDetail({ note: `sig ${hex}`, [hex]: 1 })).toEqual({ note: `sig ${REDACTED}`, [REDACTED]: 1 });
  });

  it("include AWS access key ids, which one of the old maskers missed", () => {
    expect(redactSubject("key AKIAIOSFODNN7EXAMPLE used")).toBe(`key ${REDACTED} used`);
  });
});

describe("caller-supplied exact values", () => {
  it("are masked wherever they appear, even inside longer strings and keys", () => {
    const raw = "plain-words-no-shape";
    const detail = { path: `/apps/x?t=${raw}&y=1`, nested: [{ [`k${raw}`]: raw }] };
    const out = redactDetail(detail, { secrets: [raw] });
    expect(JSON.stringify(out)).not.toContain(raw);
    expect(out).toEqual({ path: `/apps/x?t=${REDACTED}&y=1`, nested: [{ [`k${REDACTED}`]: REDACTED }] });
    expect(redactSubject(`refused ${raw}!`, { secrets: [raw] })).toBe(`refused ${REDACTED}!`);
  });

  it("mask the longer of two overlapping values whole", () => {
    expect(redactSubject("abcdefgh", { secrets: ["abcd", "abcdefgh"] })).toBe(REDACTED);
  });

  it("ignore empty and very short values, which would shred the row", () => {
    expect(redactSubject("a b c", { secrets: ["", "a"] })).toBe("a b c");
  });
});

describe("a masker that fails", () => {
  const throwing = () => {
    throw new Error("masker broke");
  };

  it("withholds the text instead of passing it on", () => {
    expect(redactSubject("Bearer abcdef", { maskers: [throwing] })).toBe(WITHHELD);
    expect(redactDetail({ a: "x", b: [1, "y"] }, { maskers: [throwing] })).toEqual({
      [WITHHELD]: WITHHELD,
      [`${WITHHELD}#2`]: [1, WITHHELD],
    });
  });
});

describe("subjects", () => {
  it("are one line with control characters escaped", () => {
    expect(redactSubject("a\nb\tc\u0000\u202e")).toBe("a\\nb\\tc\\x00\\u202e");
  });

  it("are cut at 500 characters with a marker naming what was left out", () => {
    const out = redactSubject("x".repeat(MAX_TEXT_CHARS + 7));
    expect(out).toBe(`${"x".repeat(MAX_TEXT_CHARS)}…[+7 chars]`);
  });
});
