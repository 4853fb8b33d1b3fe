// The dashboard at the edge, in real Chromium: the built worker under Miniflare in edge mode on
// https://claw.example (a test CA's certificate; Chromium sends the name to loopback), the owner
// signed in with a link minted over a paired machine's link, creates a pairing code on the
// Devices page, and a second machine pairs with it through the CLI.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import type { Browser } from "playwright-core";
import { seriousViolations } from "./helpers/axe";
import { launchChromium } from "./helpers/browser";
import { startEdgeWorker } from "./helpers/edge-worker";
import { makeTestCertificates, type TestCertificates } from "./helpers/test-ca";
import { makeHome, removeHome, repoRoot, runCliWithInput } from "./helpers/gateway";

const ORIGIN = "https://claw.example";
const PAIRING_SECRET = randomBytes(24).toString("hex");

let certs: TestCertificates;
let edge: Miniflare;
let browser: Browser;
let cliEnv: NodeJS.ProcessEnv;
const homes: string[] = [];

beforeAll(async () => {
  certs = makeTestCertificates({ names: ["claw.example"] });
  const started = await startEdgeWorker({
    repoRoot,
    origin: ORIGIN,
    certs,
    pairingSecret: PAIRING_SECRET,
    internalSecret: randomBytes(32).toString("hex"),
  });
  edge = started.edge;
  browser = await launchChromium([`--host-resolver-rules=MAP claw.example:443 127.0.0.1:${started.port}`]);
  cliEnv = { PERSONALCLAW_EDGE_CONNECT_TO: `127.0.0.1:${started.port}`, NODE_EXTRA_CA_CERTS: certs.caPath };
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await edge?.dispose();
  for (const home of homes) removeHome(home);
});

function home(prefix: string): string {
  const made = makeHome(prefix);
  homes.push(made);
  return made;
}

describe("the dashboard at the edge", () => {
  it("the signed-in owner creates a pairing code on the Devices page, and a second machine pairs with it", async () => {
    const first = home("pc-edge-ui-first-");
    const paired = await runCliWithInput(["edge", "pair", ORIGIN, "--json"], `${PAIRING_SECRET}\n`, {
      ...cliEnv,
      PERSONALCLAW_HOME: first,
    });
    expect(paired.code, paired.stderr).toBe(0);
    const minted = await runCliWithInput(["token", "--edge", "--json"], "", { ...cliEnv, PERSONALCLAW_HOME: first });
    expect(minted.code, minted.stderr).toBe(0);
    const link = (JSON.parse(minted.stdout) as { url: string }).url;

    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      await page.goto(link);
      await page.goto(`${ORIGIN}/#/devices`);
      const part = page.locator("#pair-machine");
      await part.getByRole("button", { name: "Create a pairing code" }).click();
      const code = (await part.locator("[data-field=pairing-code]").textContent()) ?? "";
      expect(code).toMatch(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){4}$/);
      expect(await part.locator("pre code").textContent()).toBe(`personalclaw edge pair ${ORIGIN} --code`);
      // The page with the code shown passes axe and has no sideways scroll at a phone's width and a laptop's.
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 844 });
        expect(await seriousViolations(page), `Devices at ${width} px`).toEqual([]);
        expect(
          await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth),
        ).toBe(true);
      }

      const second = home("pc-edge-ui-second-");
      const again = await runCliWithInput(["edge", "pair", ORIGIN, "--code", "--json"], `${code}\n`, {
        ...cliEnv,
        PERSONALCLAW_HOME: second,
      });
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(existsSync(join(second, "edge.json"))).toBe(true);
      const secondMachine = (JSON.parse(readFileSync(join(second, "edge.json"), "utf8")) as { machine: string })
        .machine;

      // The page lists both machines; the second one, lost, is forgotten after a question whose focus is on Cancel.
      await page.reload();
      const items = part.locator("li[data-machine]");
      await expect.poll(() => items.count(), { timeout: 15_000 }).toBe(2);
      expect(await items.first().textContent()).toContain("runs the apps");
      const lost = part.locator(`li[data-machine="${secondMachine}"]`);
      expect(await lost.textContent()).toContain("with a code");
      await lost.getByRole("button", { name: /^Forget machine/ }).click();
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 844 });
        expect(await seriousViolations(page), `Devices asking at ${width} px`).toEqual([]);
      }
      await lost.getByRole("button", { name: /^Yes, forget machine/ }).click();
      await part.getByText(/is forgotten: its links closed/).waitFor({ timeout: 15_000 });
      await expect.poll(() => lost.textContent()).toContain("forgotten");
      expect(await lost.getByRole("button").count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 120_000);
});
