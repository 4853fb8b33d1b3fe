// The one way a suite starts Chromium: Debian's own binary (never a downloaded browser),
// headless, with nothing that reaches the network on its own.
import { chromium, type Browser } from "playwright-core";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Starts Chromium; `extraArgs` adds switches (a host resolver rule that sends a test name to loopback, say). */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: [...CHROMIUM_ARGS, ...extraArgs] });
}
