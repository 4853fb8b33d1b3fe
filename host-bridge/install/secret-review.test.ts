// Who holds each secret and where it goes is part of what the owner consents to: the review
// says it per secret (and so the consent digest covers it), and an update that turns a
// placeholder into a value the app holds, or sends the secret to a new origin, asks again.
import { describe, expect, it } from "vitest";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { buildReview } from "./review";
import { updateNeedsConsent } from "./update-app";

const clean = { verdict: "clean" as const, findings: [] };

function manifest(secret: Record<string, unknown>): AppManifest {
  return AppManifestSchema.parse({
    name: "weather",
    version: "1.0.0",
    permissions: { network: ["api.example.com", "eu.example.com"] },
    secrets: [{ name: "WEATHER_KEY", why: "asks the forecast", ...secret }],
  });
}

const use = { origins: ["https://api.example.com"], header: "Authorization", format: "Bearer {value}" };

describe("secrets in the review", () => {
  it("a secret with a use is one the app never sees, sent to its origins in the declared place", () => {
    const [secret] = buildReview(manifest({ use }), clean).secrets;
    expect(secret).toMatchObject({
      name: "WEATHER_KEY",
      appHoldsValue: false,
      sendsTo: [{ origin: "https://api.example.com", place: "header Authorization: Bearer {value}" }],
    });
    expect(secret!.note).toContain("The app never sees this value");
  });

  it("a secret without a use, or with delivery env, is flagged: the app holds this value", () => {
    for (const declared of [{}, { use, delivery: "env" }]) {
      const [secret] = buildReview(manifest(declared), clean).secrets;
      expect(secret!.appHoldsValue, JSON.stringify(declared)).toBe(true);
      expect(secret!.note).toContain("The app holds this value");
    }
    expect(buildReview(manifest({}), clean).secrets[0]!.sendsTo).toEqual([]);
  });

  it("Basic credentials and a query parameter are named as the place", () => {
    const basic = buildReview(manifest({ use: { origins: use.origins, basic: true } }), clean).secrets[0]!;
    expect(basic.sendsTo![0]!.place).toBe("HTTP Basic credentials");
    const query = buildReview(manifest({ use: { origins: use.origins, query: "api_key" } }), clean).secrets[0]!;
    expect(query.sendsTo![0]!.place).toBe("query parameter api_key");
  });

  it("an update that hands the app the value, or sends it to a new origin, asks for consent", () => {
    const placeholder = buildReview(manifest({ use }), clean);
    const held = buildReview(manifest({ use, delivery: "env" }), clean);
    const moreOrigins = buildReview(
      manifest({ use: { ...use, origins: [...use.origins, "https://eu.example.com"] } }),
      clean,
    );
    for (const after of [held, moreOrigins]) {
      const judged = updateNeedsConsent(placeholder, after);
      expect(judged.needed).toBe(true);
      expect(judged.changes.map((c) => c.field)).toEqual(["secrets"]);
    }
    expect(updateNeedsConsent(placeholder, buildReview(manifest({ use }), clean)).needed).toBe(false);
  });
});
