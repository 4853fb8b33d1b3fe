import { describe, expect, it } from "vitest";
import { validateManifest, type ValidateManifestOptions } from "./manifest";
import { ownerOriginsRefusal, parseSecretOrigin, secretDelivery, secretHoldingWords } from "./secret-delivery";

const opts: ValidateManifestOptions = {
  reservedNames: new Set<string>(),
  fromNativeFolder: false,
  core: { version: "0.3.0", features: [] },
};

const bearer = { origins: ["https://api.example.com"], header: "Authorization", format: "Bearer {value}" };

function manifestWith(secret: Record<string, unknown>, network: unknown = ["api.example.com", "127.0.0.2:8443"]) {
  return {
    name: "weather",
    version: "1.0.0",
    permissions: { network },
    secrets: [{ name: "WEATHER_KEY", why: "asks the forecast", ...secret }],
  };
}

function refusal(secret: Record<string, unknown>, network?: unknown) {
  const result = validateManifest(manifestWith(secret, network), opts);
  if (result.ok) throw new Error("expected a refusal");
  return result;
}

describe("a secret's use and delivery in the manifest", () => {
  it("accepts a header, a Basic and a query use on granted origins, a non-default port and an address literal", () => {
    for (const use of [
      bearer,
      { origins: ["https://127.0.0.2:8443"], basic: true },
      { origins: ["https://api.example.com", "https://127.0.0.2:8443"], query: "api_key" },
    ])
      expect(validateManifest(manifestWith({ use }), opts).ok, JSON.stringify(use)).toBe(true);
  });

  it("an origin permissions.network does not cover is refused with its stable code, naming the field", () => {
    for (const [origins, network] of [
      [["https://other.example.com"], ["api.example.com"]],
      // The grant's port is 443 unless it says so: another port of the same name is not covered.
      [["https://api.example.com:8443"], ["api.example.com"]],
      [["https://api.example.com"], false],
      [["https://api.example.com"], []],
    ] as const) {
      const r = refusal({ use: { ...bearer, origins } }, network);
      expect(r.code, JSON.stringify(origins)).toBe("manifest_secret_origin_not_granted");
      expect(r.field).toBe("secrets[0].use.origins[0]");
      expect(r.message).toContain(origins[0]);
    }
    // A subdomain wildcard covers a name below it.
    expect(
      validateManifest(
        manifestWith({ use: { ...bearer, origins: ["https://eu.example.com"] } }, ["*.example.com"]),
        opts,
      ).ok,
    ).toBe(true);
  });

  it("an origin in clear, with a path, a login, a query, a default port or upper case is refused", () => {
    for (const origin of [
      "http://api.example.com",
      "https://api.example.com/v1",
      "https://user:pw@api.example.com",
      "https://api.example.com?x=1",
      "https://api.example.com:443",
      "https://API.example.com",
      "https://api.example.com/",
      "api.example.com",
    ]) {
      const r = refusal({ use: { ...bearer, origins: [origin] } });
      expect(r.code, origin).toBe("manifest_invalid");
      expect(r.field, origin).toBe("secrets[0].use.origins[0]");
    }
  });

  it("a use names exactly one place; a format holds {value} once; framing and proxy headers are refused", () => {
    for (const use of [
      { origins: bearer.origins },
      { ...bearer, query: "key" },
      { origins: bearer.origins, basic: true, format: "Bearer {value}" },
      { ...bearer, format: "Bearer" },
      { ...bearer, format: "{value}{value}" },
      { ...bearer, format: "Bearer {value}\r\nX-Evil: 1" },
      { ...bearer, header: "Host" },
      { ...bearer, header: "Content-Length" },
      { ...bearer, header: "Transfer-Encoding" },
      { ...bearer, header: "Proxy-Authorization" },
    ]) {
      const r = refusal({ use });
      expect(r.code, JSON.stringify(use)).toBe("manifest_invalid");
    }
    expect(refusal({ use: { ...bearer, header: "Bad Header" } }).code).toBe("manifest_invalid");
  });

  it("a placeholder without a use is refused: there is nowhere to write the value", () => {
    const r = refusal({ delivery: "placeholder" });
    expect(r).toMatchObject({ code: "manifest_invalid", field: "secrets[0].delivery" });
  });

  it("delivery is a placeholder with a use and the value without one, unless the manifest says which", () => {
    expect(secretDelivery({ name: "K", use: bearer })).toBe("placeholder");
    expect(secretDelivery({ name: "K" })).toBe("env");
    expect(secretDelivery({ name: "K", use: bearer, delivery: "env" })).toBe("env");
    expect(secretHoldingWords({ name: "K" })).toContain("The app holds this value");
    expect(secretHoldingWords({ name: "K", use: bearer, delivery: "env" })).toContain("The app holds this value");
    const words = secretHoldingWords({ name: "K", use: bearer });
    expect(words).toContain("The app never sees this value");
    expect(words).toContain("https://api.example.com in header Authorization: Bearer {value}");
  });

  it("the app's base URL is the http:// form of the origin, keeping a port that is not 443", () => {
    expect(parseSecretOrigin("https://api.example.com")).toMatchObject({
      host: "api.example.com",
      port: 443,
      plainBase: "http://api.example.com",
    });
    expect(parseSecretOrigin("https://127.0.0.2:8443")).toMatchObject({
      host: "127.0.0.2",
      port: 8443,
      plainBase: "http://127.0.0.2:8443",
    });
    expect(parseSecretOrigin("https://[2001:db8::1]:8443")).toMatchObject({
      host: "2001:db8::1",
      port: 8443,
      plainBase: "http://[2001:db8::1]:8443",
    });
  });
});

describe("origins the owner chooses for an app's copy", () => {
  const secret = { name: "WEATHER_KEY", use: bearer };
  const grant = ["api.example.com", "eu.example.com", "127.0.0.2:8443"];

  it("accepts granted https origins in their normal form, and says so in the holding words", () => {
    expect(ownerOriginsRefusal("weather", secret, ["https://eu.example.com", "https://127.0.0.2:8443"], grant)).toBe(
      null,
    );
    expect(secretHoldingWords(secret, ["https://eu.example.com"])).toContain(
      "It is sent to https://eu.example.com in header Authorization: Bearer {value} (origins you set).",
    );
  });

  it("refuses an origin outside the grant, a malformed or repeated one, and any choice for a value the app holds", () => {
    expect(ownerOriginsRefusal("weather", secret, ["https://evil.example.net"], grant)).toEqual({
      code: "secret_origin_not_granted",
      vars: { origin: "https://evil.example.net", app: "weather" },
    });
    // The grant names the port: another port of a granted host is not granted.
    expect(ownerOriginsRefusal("weather", secret, ["https://127.0.0.2"], grant)?.code).toBe(
      "secret_origin_not_granted",
    );
    for (const bad of [
      "http://eu.example.com",
      "https://eu.example.com/",
      "https://EU.example.com",
      "eu.example.com",
      // Second spellings a wildcard grant would cover: a pattern as a host, a trailing dot.
      "https://*.example.com",
      "https://eu.example.com.",
      "https://eu_x.example.com",
    ])
      expect(ownerOriginsRefusal("weather", secret, [bad], grant)?.code, bad).toBe("secret_origin_invalid");
    expect(
      ownerOriginsRefusal("weather", secret, ["https://eu.example.com", "https://eu.example.com"], grant)?.code,
    ).toBe("secret_origin_invalid");
    expect(
      ownerOriginsRefusal("weather", { ...secret, delivery: "env" }, ["https://eu.example.com"], grant)?.code,
    ).toBe("secret_origins_not_brokered");
    expect(ownerOriginsRefusal("weather", { name: "HELD" }, ["https://eu.example.com"], grant)?.code).toBe(
      "secret_origins_not_brokered",
    );
  });
});
