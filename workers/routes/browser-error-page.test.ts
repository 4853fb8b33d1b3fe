import { describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { browserErrorPage, isPageNavigation } from "./browser-error-page";

const NAVIGATE = {
  accept: "text/html,application/xhtml+xml,*/*;q=0.8",
  "sec-fetch-mode": "navigate",
  "sec-fetch-site": "none",
};

describe("isPageNavigation", () => {
  it("is a page for the owner's own navigation to the dashboard or an app's UI", () => {
    expect(isPageNavigation("GET", "/", new Headers(NAVIGATE))).toBe(true);
    expect(isPageNavigation("GET", "/apps/notes/", new Headers(NAVIGATE))).toBe(true);
    expect(isPageNavigation("HEAD", "/apps/notes/", new Headers(NAVIGATE))).toBe(true);
    expect(isPageNavigation("GET", "/", new Headers({ ...NAVIGATE, "sec-fetch-site": "same-origin" }))).toBe(true);
    // A browser that sends no fetch metadata is known by what it accepts.
    expect(isPageNavigation("GET", "/", new Headers({ accept: "text/html" }))).toBe(true);
  });

  it("is the envelope for fetch, XHR, scripts, JSON, writes, the API and another site's navigation", () => {
    expect(isPageNavigation("GET", "/", new Headers({ accept: "*/*", "sec-fetch-mode": "cors" }))).toBe(false);
    expect(isPageNavigation("GET", "/", new Headers({ accept: "*/*" }))).toBe(false);
    expect(isPageNavigation("GET", "/", new Headers())).toBe(false);
    expect(isPageNavigation("GET", "/", new Headers({ ...NAVIGATE, accept: "application/json" }))).toBe(false);
    expect(isPageNavigation("POST", "/", new Headers(NAVIGATE))).toBe(false);
    expect(isPageNavigation("GET", "/api/status", new Headers(NAVIGATE))).toBe(false);
    expect(isPageNavigation("GET", "/apps/notes/api/items", new Headers(NAVIGATE))).toBe(false);
    expect(isPageNavigation("GET", "/apps/notes/api", new Headers(NAVIGATE))).toBe(false);
    expect(isPageNavigation("GET", "/", new Headers({ ...NAVIGATE, "sec-fetch-site": "cross-site" }))).toBe(false);
    expect(isPageNavigation("GET", "/", new Headers({ ...NAVIGATE, "sec-fetch-site": "same-site" }))).toBe(false);
    expect(isPageNavigation("GET", "/", new Headers({ accept: "text/html", "sec-fetch-mode": "no-cors" }))).toBe(false);
  });
});

describe("browserErrorPage", () => {
  it("keeps the status and headers, shows the code, and is locked by its CSP", async () => {
    const error = new GatewayError("session_expired", {
      vars: { reason: "link expired" },
      headers: { "X-Auth-Required": "true" },
    });
    const page = browserErrorPage(error, "GET");
    expect(page.status).toBe(403);
    expect(page.headers.get("x-auth-required")).toBe("true");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'self';/);
    const html = await page.text();
    expect(html).toContain('<code class="error-code">session_expired</code>');
    expect(html).toContain("personalclaw token");
    expect(html).not.toMatch(/<script|\son\w+=/i);
  });

  it("writes a hostile message as text: markup as entities, bidi and ANSI as visible escapes, a credential masked", async () => {
    const error = new GatewayError("not_found", {
      message: `<script>alert(1)</script>" onload="x \u202e \u001b[2J Bearer abcdefghijklmnop`,
    });
    const html = await browserErrorPage(error, "GET").text();
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&quot; onload=&quot;x \\u202e \\x1b[2J Bearer ***");
    expect(html).not.toContain("<script>");
    expect(html).not.toMatch(/[\u202e\u001b]/);
  });

  it("answers HEAD with the headers and no body", async () => {
    const page = browserErrorPage(new GatewayError("app_not_found", { vars: { name: "x" } }), "HEAD");
    expect(page.status).toBe(404);
    expect(await page.text()).toBe("");
  });
});
