import { describe, expect, it } from "vitest";
import { appNetworkGrant, grantAllows, grantPatterns, NetworkGrantSchema, parseHostPattern } from "./network-grant";

describe("network grant", () => {
  it.each([
    ["api.example.com", { kind: "exact", host: "api.example.com", port: 443 }],
    ["API.Example.com:8443", { kind: "exact", host: "api.example.com", port: 8443 }],
    ["*.example.com", { kind: "subdomains", host: "example.com", port: 443 }],
    ["127.0.0.2:*", { kind: "ip", host: "127.0.0.2", port: "any" }],
    ["[2001:db8::1]:80", { kind: "ip", host: "2001:db8::1", port: 80 }],
  ])("parses %s", (text, want) => {
    expect(parseHostPattern(text)).toEqual(want);
  });

  it.each([
    "*.com",
    "*",
    "*.*.example.com",
    "a*.example.com",
    "exa mple.com",
    "example.com:0",
    "example.com:70000",
    "1.2.3",
    "999.1.1.1",
    "",
    " example.com",
    "http://example.com",
    "-bad.example.com",
    "[::1",
  ])("refuses %j", (text) => {
    expect("error" in (parseHostPattern(text) as object)).toBe(true);
    expect(NetworkGrantSchema.safeParse([text]).success).toBe(false);
  });

  it("is false or a list: true (any host) is never an app's to declare", () => {
    expect(NetworkGrantSchema.safeParse(false).success).toBe(true);
    expect(NetworkGrantSchema.safeParse(true).success).toBe(false);
    expect(NetworkGrantSchema.safeParse("all").success).toBe(false);
  });

  it("a wildcard covers subdomains, never the apex; ports must match", () => {
    const p = grantPatterns(["*.example.com", "exact.test:8080"]);
    expect(grantAllows(p, "a.example.com", 443)).not.toBeNull();
    expect(grantAllows(p, "a.b.example.com", 443)).not.toBeNull();
    expect(grantAllows(p, "example.com", 443)).toBeNull();
    expect(grantAllows(p, "evilexample.com", 443)).toBeNull();
    expect(grantAllows(p, "a.example.com", 80)).toBeNull();
    expect(grantAllows(p, "exact.test", 8080)).not.toBeNull();
    expect(grantAllows(p, "exact.test", 443)).toBeNull();
    expect(grantPatterns(false)).toEqual([]);
  });

  it("an app's grant is its manifest's consented hosts, and none for false, absent or a malformed entry", () => {
    expect(appNetworkGrant({ permissions: { network: ["api.example.com", "*.example.org:8443"] } })).toEqual([
      "api.example.com",
      "*.example.org:8443",
    ]);
    expect(appNetworkGrant({ permissions: { network: false } })).toEqual([]);
    expect(appNetworkGrant({ permissions: {} })).toEqual([]);
    expect(appNetworkGrant({})).toEqual([]);
    expect(appNetworkGrant({ permissions: { network: ["ok.example", " spaced.example", 7, "*."] } })).toEqual([
      "ok.example",
    ]);
  });
});
