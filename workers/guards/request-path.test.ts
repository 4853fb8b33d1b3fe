// The one path rule over the encodings a router, a URL parser and a guard could read apart.
import { describe, expect, it } from "vitest";
import { ambiguityByEveryRule, hasQuery, pathAmbiguity, rawPathOf } from "./request-path";

const REFUSED: Array<[string, string]> = [
  ["/%61pi/token/local", "an encoded letter in /api"],
  ["/%41PI/status", "an encoded capital"],
  ["/ap%69/status", "an encoded letter mid-segment"],
  ["/api/token/%6Cocal", "an encoded letter in an API segment"],
  ["/apps/n%6fde-notes/api/echo", "an encoded letter in an app name"],
  ["/apps/node%2Dnotes/api/echo", "an encoded hyphen in an app name"],
  ["/apps/a%20b/api/echo", "any escape in an app name"],
  ["/%20api/status", "any escape in the first segment"],
  ["/api%2fstatus", "an encoded slash"],
  ["/apps/x/api/a%2Fb", "an encoded slash in a tail"],
  ["/apps/x/api/a%5cb", "an encoded backslash"],
  ["/apps/x/api/a\\b", "a raw backslash"],
  ["/apps/x/api/%2e%2e/y", "an encoded dot segment"],
  ["/apps/x/api/.%2e/y", "a half-encoded dot segment"],
  ["/apps/x/api/../y", "a dot-dot segment"],
  ["/apps/x/api/./y", "a dot segment"],
  ["/apps/x/api/..", "a trailing dot-dot segment"],
  ["/apps/x/api//y", "an empty segment"],
  ["//api/status", "a leading empty segment"],
  ["/apps/x/api/%252e%252e/y", "double encoding"],
  ["/apps/x/api/%25", "an encoded percent"],
  ["/apps/x/api/%", "a lone percent"],
  ["/apps/x/api/%zz", "a percent without hex"],
  ["/apps/x/api/%4", "a truncated escape"],
  ["/apps/x/api/%00", "an encoded NUL"],
  ["/apps/x/api/a%0ab", "an encoded line feed"],
  ["/apps/x/api/%7f", "an encoded DEL"],
  ["/apps/x/api/%C2%85", "an encoded C1 control"],
  ["/apps/x/api/%C0%AE%C0%AE/y", "an overlong UTF-8 dot"],
  ["/apps/x/api/%C0%AF", "an overlong UTF-8 slash"],
  ["/apps/x/api/%FF", "an invalid UTF-8 byte"],
  ["/apps/x/api/%ED%A0%80", "an encoded surrogate"],
  ["/apps/x/api/%E2%82", "a truncated UTF-8 sequence"],
  ["/apps/x/api/a b", "a raw space"],
  ["/apps/x/api/\u00e9", "a raw non-ASCII character"],
  ["/apps/x/api/a\tb", "a raw tab"],
  ["api/status", "no leading slash"],
];

const ACCEPTED = [
  "/",
  "/api/status",
  "/api/token/local",
  "/apps/node-notes/",
  "/apps/node-notes/api/echo",
  "/apps/node-notes/api/search/caf%C3%A9",
  "/apps/node-notes/api/a%20b",
  "/apps/node-notes/api/a%3Fb",
  "/apps/node-notes/api/x.y/z_~-",
  "/index.html",
];

describe("the one path rule", () => {
  it.each(REFUSED)("refuses %s (%s)", (path) => {
    expect(pathAmbiguity(path)).not.toBeNull();
  });

  it.each(ACCEPTED)("accepts %s", (path) => {
    expect(pathAmbiguity(path)).toBeNull();
  });

  it("answers exactly what every rule answers, on a generated corpus that is mostly plain paths", () => {
    // Plain characters, the ones a parser rewrites or a decoder changes, and the segment marks.
    const alphabet = [
      ..."aZ09-._~!$&'()*+,;=:@",
      ...'./%\\ \t\u00e9^`{}"<>|[]',
      "%2e",
      "%2F",
      "%41",
      "%C3%A9",
      "..",
      ".",
    ];
    let seed = 0x9e3779b9;
    const next = (n: number) => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed % n;
    };
    let plain = 0;
    for (let i = 0; i < 20_000; i++) {
      const segments = Array.from({ length: 1 + next(5) }, () => {
        const length = next(4);
        // Two in three segments draw from the plain characters only.
        const pool = next(3) === 0 ? alphabet.length : 21;
        return Array.from({ length }, () => alphabet[next(pool)]).join("");
      });
      const path = `/${segments.join("/")}`;
      const answer = pathAmbiguity(path);
      expect(answer, path).toBe(ambiguityByEveryRule(path));
      if (answer === null) plain++;
    }
    // The corpus must exercise the accepting side, not only refusals.
    expect(plain).toBeGreaterThan(2_000);
  });

  it("slices the raw path exactly as the router does, before the query and fragment", () => {
    expect(rawPathOf("http://127.0.0.1:1/%61pi/x?token=a/b#c")).toBe("/%61pi/x");
    expect(rawPathOf("http://127.0.0.1:1/a#b?c")).toBe("/a");
    expect(rawPathOf("http://[::1]:1/apps/x/api/y")).toBe("/apps/x/api/y");
    expect(rawPathOf("http://127.0.0.1:1")).toBe("/");
  });

  it("says a URL has a query exactly when WHATWG's URL reads a non-empty search", () => {
    const pieces = ["", "?", "#", "a", "/", "?a", "#a", "?#", "#?", "??", "=", "&", "%3F", "%23"];
    const hosts = ["http://127.0.0.1:1", "http://[::1]:1", "http://localhost"];
    let withQuery = 0;
    for (const host of hosts)
      for (const a of pieces)
        for (const b of pieces)
          for (const c of pieces) {
            const url = `${host}/p${a}${b}${c}`;
            const expected = new URL(url).search !== "";
            expect(hasQuery(url), url).toBe(expected);
            if (expected) withQuery++;
          }
    expect(withQuery).toBeGreaterThan(1_000);
  });
});
