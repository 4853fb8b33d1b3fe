// What of a backend's answer reaches the browser on the gateway's origin.
import { describe, expect, it } from "vitest";
import { backendAnswerHeaders, keptLocation } from "./backend-answer-headers";
import { SANDBOXED_UI_CSP } from "./sandboxed-ui";

const asked = new URL("http://127.0.0.1:10000/apps/notes/api/items/1?x=1");

describe("a backend's Location", () => {
  it.each([
    ["next", "/apps/notes/api/items/next"],
    ["/apps/notes/api/other?a=b#c", "/apps/notes/api/other?a=b#c"],
    ["http://127.0.0.1:10000/apps/notes/", "/apps/notes/"],
    ["../list", "/apps/notes/api/list"],
  ])("keeps %j inside the app as %j", (location, kept) => {
    expect(keptLocation(location, asked, "notes")).toBe(kept);
  });

  it.each([
    "http://evil.example/",
    "//evil.example/apps/notes/",
    "/\\evil.example/",
    "https://127.0.0.1:10000/apps/notes/",
    "http://127.0.0.1:10001/apps/notes/",
    "http://localhost:10000/apps/notes/",
    "/api/token/local",
    "/apps/notes-evil/api/x",
    "/apps/notes",
    "/apps/notes/../other/",
    "../../../api/auth/sessions",
    "/apps/notes/api/%2e%2e%2f..%2fapi",
    "javascript:alert(1)",
    "data:text/html,<script>1</script>",
    "http://[::1",
  ])("drops %j", (location) => {
    expect(keptLocation(location, asked, "notes")).toBeNull();
  });
});

describe("the answer's headers", () => {
  it("pass only the table, add the sandbox CSP, nosniff and no-referrer, and drop what acts on the origin", () => {
    const incoming = new Headers([
      ["content-type", "text/html"],
      ["cache-control", "max-age=60"],
      ["etag", '"v1"'],
      ["last-modified", "Wed, 21 Oct 2015 07:28:00 GMT"],
      ["set-cookie", "pc_token_10000=planted; Path=/api"],
      ["refresh", "0; url=http://evil.example/"],
      ["clear-site-data", '"*"'],
      ["content-security-policy", "default-src *"],
      ["content-security-policy-report-only", "default-src *"],
      ["link", "<http://evil.example/x.css>; rel=stylesheet"],
      ["www-authenticate", 'Basic realm="PersonalClaw"'],
      ["access-control-allow-origin", "*"],
      ["access-control-allow-credentials", "true"],
      ["x-content-type-options", "sniff"],
      ["location", "http://evil.example/"],
      ["x-app-thing", "1"],
    ]);
    const out = backendAnswerHeaders(incoming, null, null);
    expect(Object.fromEntries(out)).toEqual({
      "content-type": "text/html",
      "cache-control": "max-age=60",
      etag: '"v1"',
      "last-modified": "Wed, 21 Oct 2015 07:28:00 GMT",
      "content-security-policy": SANDBOXED_UI_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    });
    expect(SANDBOXED_UI_CSP).toMatch(/^sandbox allow-scripts/);
    expect(SANDBOXED_UI_CSP).not.toContain("allow-same-origin");
  });

  it("keep the sandboxed UI's CORS answer for Origin: null and a kept Location", () => {
    const out = backendAnswerHeaders(new Headers(), "/apps/notes/api/x", "null");
    expect(out.get("access-control-allow-origin")).toBe("null");
    expect(out.get("location")).toBe("/apps/notes/api/x");
    expect(
      backendAnswerHeaders(new Headers(), null, "http://evil.example").get("access-control-allow-origin"),
    ).toBeNull();
  });
});
