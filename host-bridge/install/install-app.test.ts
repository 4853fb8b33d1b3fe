// installApp's all-or-nothing promise with a failure injected right after the move into place,
// and the UI folder listed again before it: what was and was not left in the apps folder.
import { existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { installApp, removeAppFiles, type InstallContext } from "./install-app";
import { clearJournal } from "./transition-journal";
import { parkedDataDir, parkedRecordPath } from "./parked-data";
import { previewBundle } from "./preview";
import { DEFAULT_LIMITS } from "../sandbox/bounds";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function setup(manifest: Record<string, unknown>, files: Record<string, string> = {}) {
  const root = await mkdtemp(join(tmpdir(), "pc-install-app-"));
  roots.push(root);
  const bundle = join(root, "bundle");
  const appsDir = join(root, "home", "apps");
  await mkdir(appsDir, { recursive: true });
  for (const [rel, text] of Object.entries({ "app.json": JSON.stringify(manifest), ...files })) {
    await mkdir(join(bundle, rel, ".."), { recursive: true });
    await writeFile(join(bundle, rel), text);
  }
  const ctx = {
    home: join(root, "home"),
    ownerHome: root,
    sandboxMode: "off",
    sandbox: { ok: false, reason: "not used" },
    bounds: { mechanism: "none", processLimitBinds: false, description: "not used" },
    limits: DEFAULT_LIMITS,
    parentEnv: {},
    passthrough: [],
    log: () => {},
    appsDir,
    preview: {
      quarantineRoot: join(appsDir, ".quarantine"),
      reservedNames: new Set<string>(),
      core: { version: "0.3.0", features: [] },
    },
  } as unknown as InstallContext;
  const preview = await previewBundle(bundle, { ...ctx.preview, appsDir });
  if (!preview.ok) throw new Error(preview.message);
  return { root, bundle, appsDir, ctx, digest: preview.digest };
}

const visible = (appsDir: string) =>
  readdirSync(appsDir)
    .filter((n) => n !== ".quarantine")
    .sort();

describe("installApp", () => {
  it("undoes the move when a step after it fails: no folder, empty quarantine, the name free", async () => {
    const { bundle, appsDir, ctx, digest } = await setup(
      { name: "late", version: "1.0.0", ui: { entry: "ui/index.html" } },
      { "ui/index.html": "<p>x</p>" },
    );
    const failing = installApp(bundle, digest, new Set(), ctx, () => {}, {
      afterMove: async () => {
        throw new Error("disk full");
      },
    });
    await expect(failing).rejects.toMatchObject({ code: "install_step_failed" });
    expect(visible(appsDir)).toEqual([]);
    expect(readdirSync(join(appsDir, ".quarantine"))).toEqual([]);
    const installed = await installApp(bundle, digest, new Set(), ctx, () => {});
    expect(installed.uiFiles).toEqual({ "index.html": expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(visible(appsDir)).toEqual(["late"]);
  });

  it("puts adopted data back where it was parked, with its record, when the install is undone", async () => {
    const { bundle, appsDir, ctx, digest } = await setup({
      name: "keeps",
      version: "1.0.0",
      permissions: { storage: true },
    });
    await installApp(bundle, digest, new Set(), ctx, () => {});
    // The gateway commits a recorded install, which drops its journal.
    await clearJournal(ctx.home, "keeps");
    await writeFile(join(appsDir, "keeps", "data", "notes.txt"), "mine");
    await removeAppFiles(appsDir, "keeps", false, { version: "1.0.0", consentDigest: digest });
    const record = readFileSync(parkedRecordPath(appsDir, "keeps"), "utf8");
    // The review now names the parked data, so the digest to consent to changed with it.
    const again = await previewBundle(bundle, { ...ctx.preview, appsDir });
    if (!again.ok) throw new Error(again.message);
    expect(again.review.keptData).toMatchObject({ version: "1.0.0" });
    const failing = installApp(bundle, again.digest, new Set(), ctx, () => {}, {
      adoptData: true,
      afterMove: async () => {
        throw new GatewayError("internal_error");
      },
    });
    await expect(failing).rejects.toMatchObject({ code: "internal_error" });
    expect(existsSync(join(appsDir, "keeps"))).toBe(false);
    expect(readFileSync(join(parkedDataDir(appsDir, "keeps"), "notes.txt"), "utf8")).toBe("mine");
    expect(readFileSync(parkedRecordPath(appsDir, "keeps"), "utf8")).toBe(record);
  });

  it("refuses an install whose UI folder gained a link after staging, before anything moves", async () => {
    const { bundle, appsDir, ctx, digest } = await setup(
      {
        name: "planted",
        version: "1.0.0",
        ui: { entry: "ui/index.html" },
        setup: { onInstall: { command: "/bin/true" } },
      },
      { "ui/index.html": "<p>x</p>" },
    );
    // Stand in for a later writer: plant the link in the quarantine copy while the hook "runs".
    const staged = installApp(bundle, digest, new Set(), ctx, (event) => {
      if (event.step === "install_hook" && event.status === "started") {
        const [id] = readdirSync(join(appsDir, ".quarantine"));
        symlinkSync("/etc/passwd", join(appsDir, ".quarantine", id!, "ui", "passwd.txt"));
      }
    });
    const outcome = await staged.then(
      () => ({ code: "installed" }),
      (error: GatewayError) => ({ code: error.code, detail: error.detail }),
    );
    expect(outcome).toMatchObject({ code: "bundle_link_in_ui", detail: { step: "verify", path: "ui/passwd.txt" } });
    expect(visible(appsDir)).toEqual([]);
    expect(readdirSync(join(appsDir, ".quarantine"))).toEqual([]);
  });
});
