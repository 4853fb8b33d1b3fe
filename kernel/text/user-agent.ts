// Names the browser and operating system a User-Agent header claims, for the Devices list.
// The header is the client's own claim: it helps the owner recognise a device, it proves
// nothing, and it is shown only as escaped text. Order matters: Edge, Opera and Samsung
// Internet say "Chrome" too, Chrome says "Safari", and every Android says "Linux".

export interface DeviceDescription {
  /** e.g. "Firefox 128", "Chrome 126", or null when the header names no known browser. */
  browser: string | null;
  /** e.g. "Windows", "macOS", "Android 14", "iOS 17.5", or null. */
  os: string | null;
}

const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, "Edge"],
  [/\bOPR\/(\d+)/, "Opera"],
  [/\bSamsungBrowser\/(\d+)/, "Samsung Internet"],
  [/\bFirefox\/(\d+)/, "Firefox"],
  [/\bFxiOS\/(\d+)/, "Firefox"],
  [/\bCriOS\/(\d+)/, "Chrome"],
  [/\bHeadlessChrome\/(\d+)/, "Headless Chrome"],
  [/\bChromium\/(\d+)/, "Chromium"],
  [/\bChrome\/(\d+)/, "Chrome"],
  [/\bVersion\/(\d+(?:\.\d+)?)[^)]*\bSafari\//, "Safari"],
  [/^curl\/(\d+(?:\.\d+)*)/, "curl"],
  [/^node(?:-fetch)?\b|^undici\b/, "Node.js"],
];

const SYSTEMS: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray) => string]> = [
  [/\b(?:iPhone|iPad|iPod).*? OS (\d+)(?:_(\d+))?/, (m) => `iOS ${m[1]}${m[2] ? `.${m[2]}` : ""}`],
  [/\bAndroid (\d+(?:\.\d+)?)/, (m) => `Android ${m[1]}`],
  [/\bAndroid\b/, () => "Android"],
  [/\bCrOS\b/, () => "ChromeOS"],
  [/\bWindows NT\b/, () => "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, () => "macOS"],
  [/\bLinux\b|\bX11\b/, () => "Linux"],
];

/** The browser and system a User-Agent header names; unknown parts are null. */
export function describeUserAgent(header: string | null): DeviceDescription {
  const ua = (header ?? "").slice(0, 512);
  let browser: string | null = null;
  for (const [pattern, name] of BROWSERS) {
    const match = pattern.exec(ua);
    if (match) {
      browser = match[1] ? `${name} ${match[1]}` : name;
      break;
    }
  }
  let os: string | null = null;
  for (const [pattern, name] of SYSTEMS) {
    const match = pattern.exec(ua);
    if (match) {
      os = name(match);
      break;
    }
  }
  return { browser, os };
}
