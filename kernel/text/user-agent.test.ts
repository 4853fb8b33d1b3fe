import { describe, expect, it } from "vitest";
import { describeUserAgent } from "./user-agent";

describe("describeUserAgent", () => {
  const cases: Array<[string, string, string | null, string | null]> = [
    [
      "Firefox on Linux",
      "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
      "Firefox 128",
      "Linux",
    ],
    [
      "Chrome on Windows",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
      "Chrome 126",
      "Windows",
    ],
    [
      "Edge, which also says Chrome and Safari",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87",
      "Edge 126",
      "Windows",
    ],
    [
      "Safari on macOS",
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
      "Safari 17.5",
      "macOS",
    ],
    [
      "Safari on an iPhone, which says Mac OS X too",
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
      "Safari 17.5",
      "iOS 17.5",
    ],
    [
      "Chrome on Android, which says Linux too",
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36",
      "Chrome 126",
      "Android 14",
    ],
    [
      "Samsung Internet",
      "Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
      "Samsung Internet 25",
      "Android 13",
    ],
    [
      "Opera",
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36 OPR/111.0.0.0",
      "Opera 111",
      "Linux",
    ],
    [
      "headless Chromium",
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36",
      "Headless Chrome 126",
      "Linux",
    ],
    [
      "ChromeOS",
      "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 Chrome/126.0.0.0 Safari/537.36",
      "Chrome 126",
      "ChromeOS",
    ],
    ["curl", "curl/8.5.0", "curl 8.5.0", null],
    ["Node's fetch", "node", "Node.js", null],
  ];
  for (const [label, ua, browser, os] of cases) {
    it(`names ${label}`, () => {
      expect(describeUserAgent(ua)).toEqual({ browser, os });
    });
  }

  it("answers null for an absent, empty or unknown header", () => {
    expect(describeUserAgent(null)).toEqual({ browser: null, os: null });
    expect(describeUserAgent("")).toEqual({ browser: null, os: null });
    expect(describeUserAgent("<script>alert(1)</script>")).toEqual({ browser: null, os: null });
  });

  it("never echoes more than a version number out of the header", () => {
    const hostile = "Mozilla/5.0 (X11; Linux) Firefox/99<script>\u202e";
    expect(describeUserAgent(hostile)).toEqual({ browser: "Firefox 99", os: "Linux" });
  });
});
