// Edge mode's guards: with PERSONALCLAW_PUBLIC_ORIGIN set, the public https:// origin is the
// gateway's own and the client address is CF-Connecting-IP; unset (a local start), nothing of
// that is accepted, and a header a local client could forge is never read.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { clientAddress } from "./client-address";
import { checkHost, checkOrigin, hostsOf, isOwnOrigin } from "./host-origin";
import { parseRequest } from "./parsed-request";
import { signInBaseUrl } from "./public-origin";
import { readPublicOrigin } from "../../kernel/rules/public-origin";

const LOCAL = { GATEWAY_PORT: "10000", ALLOWED_HOSTS: "", PERSONALCLAW_PUBLIC_ORIGIN: "" };
const EDGE = { GATEWAY_PORT: "443", ALLOWED_HOSTS: "", PERSONALCLAW_PUBLIC_ORIGIN: "https://claw.example.workers.dev" };

function refusal(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof GatewayError) return error.code;
    throw error;
  }
}

/** A request as the edge's checks see it: its Host, Origin and method. */
function edgeChecks(env: typeof LOCAL, headers: Record<string, string>, method = "POST"): string | null {
  const request = new Request("https://claw.example.workers.dev/api/settings", { method, headers });
  const hosts = hostsOf(env);
  return refusal(() => {
    checkHost(request.headers, hosts);
    checkOrigin(request.headers, method, hosts, parseRequest(request, env.GATEWAY_PORT));
  });
}

/** A request whose socket address workerd reports as `socketAddress`. */
function requestFrom(socketAddress: string, headers: Record<string, string> = {}): Request {
  const request = new Request("http://127.0.0.1:10000/", { headers });
  Object.defineProperty(request, "cf", { value: { clientIp: socketAddress } });
  return request;
}

describe("reading PERSONALCLAW_PUBLIC_ORIGIN", () => {
  it("is local when empty or unset, edge for a bare https:// origin", () => {
    expect(readPublicOrigin("")).toEqual({ mode: "local" });
    expect(readPublicOrigin(undefined)).toEqual({ mode: "local" });
    expect(readPublicOrigin("https://Claw.Example/")).toEqual({
      mode: "edge",
      public: { origin: "https://claw.example", host: "claw.example" },
    });
    expect(readPublicOrigin("https://claw.example:8443")).toMatchObject({ public: { host: "claw.example:8443" } });
  });

  it.each([
    ["http://claw.example", "not https://"],
    ["claw.example", "not a URL"],
    ["https://owner:pw@claw.example", "it carries credentials"],
    ["https://claw.example/dashboard", "an origin has no path, query or fragment"],
    ["https://claw.example?x=1", "an origin has no path, query or fragment"],
  ])("refuses %s as an edge origin (%s)", (value, reason) => {
    expect(readPublicOrigin(value)).toEqual({ mode: "invalid", reason });
  });
});

describe("Host and Origin", () => {
  it("at the edge, accepts the public Host without a port and its https:// Origin on a write", () => {
    expect(edgeChecks(EDGE, { host: "claw.example.workers.dev", origin: "https://claw.example.workers.dev" })).toBe(
      null,
    );
    expect(isOwnOrigin("https://claw.example.workers.dev", hostsOf(EDGE))).toBe(true);
  });

  it("at the edge, refuses loopback Hosts, another Host, and the public name's http:// Origin", () => {
    expect(edgeChecks(EDGE, { host: "127.0.0.1:443" })).toBe("host_not_allowed");
    expect(edgeChecks(EDGE, { host: "evil.example" })).toBe("host_not_allowed");
    expect(edgeChecks(EDGE, { host: "claw.example.workers.dev", origin: "http://claw.example.workers.dev" })).toBe(
      "origin_not_allowed",
    );
    expect(edgeChecks(EDGE, { host: "claw.example.workers.dev", origin: "https://evil.example" })).toBe(
      "origin_not_allowed",
    );
  });

  it("locally, refuses a Host without a port and an https:// Origin, as before", () => {
    expect(edgeChecks(LOCAL, { host: "claw.example.workers.dev" })).toBe("host_not_allowed");
    expect(edgeChecks(LOCAL, { host: "127.0.0.1:10000", origin: "https://127.0.0.1:10000" })).toBe(
      "origin_not_allowed",
    );
    expect(edgeChecks(LOCAL, { host: "127.0.0.1:10000", origin: "http://127.0.0.1:10000" })).toBe(null);
  });

  it("refuses every Host when the public origin is set but not an https:// origin", () => {
    const broken = { ...EDGE, PERSONALCLAW_PUBLIC_ORIGIN: "http://claw.example.workers.dev" };
    expect(edgeChecks(broken, { host: "claw.example.workers.dev" }, "GET")).toBe("host_not_allowed");
    expect(edgeChecks(broken, { host: "127.0.0.1:443" }, "GET")).toBe("host_not_allowed");
  });
});

describe("the client address", () => {
  it("at the edge, is CF-Connecting-IP, the address Cloudflare saw", () => {
    expect(clientAddress(requestFrom("", { "cf-connecting-ip": "203.0.113.7" }), EDGE)).toBe("203.0.113.7");
    expect(clientAddress(requestFrom(""), EDGE)).toBe("");
  });

  it("locally, is the socket's address: a forged CF-Connecting-IP claiming loopback is not read", () => {
    const forged = requestFrom("192.0.2.10:51234", { "cf-connecting-ip": "127.0.0.1" });
    expect(clientAddress(forged, LOCAL)).toBe("192.0.2.10");
    expect(clientAddress(requestFrom("[::1]:40000"), LOCAL)).toBe("::1");
  });
});

describe("sign-in links", () => {
  it("carry the public URL at the edge and this machine's loopback port locally", () => {
    expect(signInBaseUrl(EDGE)).toBe("https://claw.example.workers.dev/");
    expect(signInBaseUrl(LOCAL)).toBe("http://127.0.0.1:10000/");
  });
});
