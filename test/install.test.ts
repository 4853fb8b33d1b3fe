// Installing apps against a really started gateway: every refusal class of staging, the
// manifest check and the scan through the REST preview and install; consent bound to exact
// bytes; both fixture apps end to end through the CLI; failing and hanging install hooks; the
// CLI's offline preview; the locked native app; and uninstall keeping data/.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { link, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { consentDigest } from "../host-bridge/digest/consent-digest";
import { canonicalListing } from "../host-bridge/digest/canonical-listing";
import { copyVerbatim, makeSandbox, type Sandbox } from "./fixtures/hostile/sandbox";
import { makeHome, removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

const SENTINEL_TEXT = "sentinel: must never change\n";
const UNRELATED_DIGEST = `sha256:${"0".repeat(64)}`;
const NODE_NOTES = join(repoRoot, "apps", "fixtures", "node-notes");
const PY_ECHO = join(repoRoot, "apps", "fixtures", "py-echo");
// What the installer adds to an app folder itself; none of it was part of the consent.
const INSTALLER_OWNED = ["data", "venv", ".app_secret"];

type Json = Record<string, any>;

async function post(gw: RunningGateway, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const response = await gw.fetch(path, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function del(gw: RunningGateway, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const response = await gw.fetch(path, {
    method: "DELETE",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function securityEvents(gw: RunningGateway, kind: string): Promise<Json[]> {
  const response = await gw.fetch(`/api/security/events?kind=${kind}&limit=500`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: Json[] }).events;
}

/** Every path under <home>/apps except the quarantine, with what it is: what an install wrote. */
function appsTree(home: string): string[] {
  const root = join(home, "apps");
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const childRel = rel === "" ? name : `${rel}/${name}`;
      if (childRel === ".quarantine") continue;
      const st = lstatSync(join(root, childRel));
      if (st.isDirectory()) {
        out.push(`${childRel}/`);
        walk(childRel);
      } else
        out.push(
          st.isSymbolicLink() ? `${childRel} -> ${readlinkSync(join(root, childRel))}` : `${childRel} ${st.size}`,
        );
    }
  };
  if (existsSync(root)) walk("");
  return out;
}

function quarantineEntries(home: string): string[] {
  const dir = join(home, "apps", ".quarantine");
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function tempFolder(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Writes a bundle folder from a map of relative paths to contents. */
async function writeBundle(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(dir, rel, ".."), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
}

const reservedNames = JSON.parse(readFileSync(join(repoRoot, "dist", "reserved-app-names.json"), "utf8")) as string[];

interface HostileCase {
  title: string;
  /** A folder under test/fixtures/hostile, copied verbatim into the sandbox. */
  fixture?: string;
  /** Or a bundle made at run time, for what git cannot hold. */
  make?: (sb: Sandbox) => Promise<void>;
  status: number;
  code: string;
  /** What error.detail names: the offending bundle path, and for a manifest refusal the field. */
  path: string;
  field?: string;
}

const appJson = (name: string) => JSON.stringify({ name, version: "1.0.0" });

const HOSTILE: HostileCase[] = [
  { title: "an absolute link", fixture: "link-absolute", status: 422, code: "bundle_link_absolute", path: "passwd" },
  {
    title: "a link that climbs out of the bundle",
    fixture: "link-escapes",
    status: 422,
    code: "bundle_link_escapes",
    path: "stolen",
  },
  {
    title: "a link to a folder",
    fixture: "link-to-folder",
    status: 422,
    code: "bundle_link_to_folder",
    path: "lib-alias",
  },
  { title: "a dangling link", fixture: "link-dangling", status: 422, code: "bundle_link_dangling", path: "main.js" },
  {
    title: "a hard link to a file outside the bundle",
    make: async (sb) => {
      await writeFile(join(sb.bundle, "app.json"), appJson("hard-link"));
      await link(sb.sentinel, join(sb.bundle, "notes.txt"));
    },
    status: 422,
    code: "bundle_hardlink_outside",
    path: "notes.txt",
  },
  {
    title: "a FIFO",
    make: async (sb) => {
      await writeFile(join(sb.bundle, "app.json"), appJson("has-fifo"));
      execFileSync("mkfifo", [join(sb.bundle, "queue")]);
    },
    status: 422,
    code: "bundle_special_file",
    path: "queue",
  },
  {
    title: "a name holding a backslash",
    make: (sb) => writeBundle(sb.bundle, { "app.json": appJson("backslash"), "lib\\evil.js": "export {};\n" }),
    status: 422,
    code: "bundle_name_invalid",
    path: "lib\\\\evil.js",
  },
  {
    title: "a name holding a control character",
    make: (sb) => writeBundle(sb.bundle, { "app.json": appJson("control-char"), "ring\u0007bell.txt": "ding\n" }),
    status: 422,
    code: "bundle_name_invalid",
    path: "ring\\u0007bell.txt",
  },
  {
    title: "two names that differ only by letter case",
    make: (sb) =>
      writeBundle(sb.bundle, { "app.json": appJson("case-twins"), "README.md": "upper\n", "Readme.md": "mixed\n" }),
    status: 422,
    code: "bundle_name_collision",
    path: "Readme.md",
  },
  {
    title: "data/ as a link",
    fixture: "data-is-link",
    status: 422,
    code: "bundle_reserved_name_is_link",
    path: "data",
  },
  {
    title: "native: true outside the packaged folder",
    fixture: "manifest-native",
    status: 422,
    code: "manifest_native_refused",
    path: "app.json",
    field: "native",
  },
  {
    title: "a name the route table reserves (registry, kept for the platform's own route)",
    fixture: "manifest-reserved-name",
    status: 422,
    code: "app_name_reserved",
    path: "app.json",
    field: "name",
  },
  {
    title: "a permission that is not a JSON boolean",
    fixture: "manifest-not-boolean",
    status: 400,
    code: "field_not_a_boolean",
    path: "app.json",
    field: "permissions.memory",
  },
  {
    title: "a resource path with a .. segment",
    fixture: "manifest-path-escapes",
    status: 422,
    code: "manifest_path_escapes",
    path: "app.json",
    field: "backend.entryPoint",
  },
  {
    title: "a destructive command in code the backend loads",
    fixture: "scan-destructive-runtime",
    status: 422,
    code: "scan_dangerous",
    path: "lib/tools.py",
  },
];

describe("hostile bundles through a running gateway's preview and install", () => {
  let gw: RunningGateway;
  const sandboxes: Sandbox[] = [];
  beforeAll(async () => {
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    for (const sb of sandboxes) await sb.cleanup();
  });

  it("refuses every name the built route table reserves at preview, naming the field", async () => {
    expect(reservedNames).toEqual(expect.arrayContaining(["registry", "blob", "install", "register", "preview"]));
    for (const name of reservedNames) {
      const sb = await makeSandbox("manifest-missing");
      sandboxes.push(sb);
      await writeBundle(sb.bundle, { "app.json": appJson(name) });
      const answer = await post(gw, "/api/apps/preview", { source: sb.bundle });
      expect(answer.status, name).toBe(422);
      expect(answer.body.error).toMatchObject({ code: "app_name_reserved", detail: { field: "name" } });
    }
  });

  it.each(HOSTILE.map((c) => [c.title, c] as const))(
    "%s is refused by preview and install, naming it, writing nothing",
    async (_title, c) => {
      const sb = await makeSandbox(c.fixture);
      sandboxes.push(sb);
      if (c.make) await c.make(sb);
      const appsBefore = appsTree(gw.home);
      const bundleBefore = await sb.snapshot();

      const preview = await post(gw, "/api/apps/preview", { source: sb.bundle });
      const install = await post(gw, "/api/apps", { source: sb.bundle, consent: UNRELATED_DIGEST });
      for (const answer of [preview, install]) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(c.status);
        expect(answer.body.error.code).toBe(c.code);
        expect(answer.body.error.message.length).toBeGreaterThan(0);
        expect(answer.body.error.detail.path).toBe(c.path);
        if (c.field) expect(answer.body.error.detail.field).toBe(c.field);
      }

      expect(appsTree(gw.home)).toEqual(appsBefore);
      expect(quarantineEntries(gw.home)).toEqual([]);
      expect(await sb.snapshot()).toBe(bundleBefore);
      expect(await readFile(sb.sentinel, "utf8")).toBe(SENTINEL_TEXT);

      for (const kind of ["app_preview_refused", "app_install_failed"]) {
        const row = (await securityEvents(gw, kind)).find((e) => e.subject === sb.bundle);
        expect(row, `${kind} row for ${sb.bundle}`).toBeDefined();
        expect(row!.outcome).toBe("refused");
        expect(row!.detail.code).toBe(c.code);
      }
    },
  );

  it("the same destructive command only in an unreferenced test file is a warning: installable with consent", async () => {
    const sb = await makeSandbox("scan-destructive-test-only");
    sandboxes.push(sb);
    const preview = await post(gw, "/api/apps/preview", { source: sb.bundle });
    expect(preview.status).toBe(200);
    expect(preview.body.review.verdict).toBe("warning");
    expect(preview.body.review.findings.runtime.filter((f: Json) => f.severity === "dangerous")).toEqual([]);
    expect(preview.body.review.findings.tests.map((f: Json) => f.path)).toContain("tests/test_cleanup.py");

    const unconsented = await post(gw, "/api/apps", { source: sb.bundle });
    expect(unconsented.status).toBe(409);
    expect(unconsented.body.error.code).toBe("consent_required");
    expect(unconsented.body.error.detail.digest).toBe(preview.body.digest);
    expect(existsSync(join(gw.home, "apps", "destructive-test-only"))).toBe(false);

    const installed = await post(gw, "/api/apps", { source: sb.bundle, consent: preview.body.digest });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    expect(installed.body.digest).toBe(preview.body.digest);
    expect(existsSync(join(gw.home, "apps", "destructive-test-only", "tests", "test_cleanup.py"))).toBe(true);
    expect(quarantineEntries(gw.home)).toEqual([]);
    expect(await readFile(sb.sentinel, "utf8")).toBe(SENTINEL_TEXT);

    const removed = await del(gw, "/api/apps/destructive-test-only", { purge_data: true });
    expect(removed.status).toBe(200);
    expect(existsSync(join(gw.home, "apps", "destructive-test-only"))).toBe(false);
  });
});

describe("consent to exact bytes, the native app and uninstall", () => {
  let gw: RunningGateway;
  let work: string;
  let bundle: string;
  beforeAll(async () => {
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
    work = await tempFolder("pc-consent-");
    bundle = join(work, "node-notes");
    await copyVerbatim(NODE_NOTES, bundle);
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    await rm(work, { recursive: true, force: true });
  });

  it("a bundle changed by one byte after preview gets 409 consent_required with the new review, and nothing is installed", async () => {
    const preview = await post(gw, "/api/apps/preview", { source: bundle });
    expect(preview.status).toBe(200);
    const consented = preview.body.digest as string;
    expect(consented).toMatch(/^sha256:[0-9a-f]{64}$/);

    const server = join(bundle, "server.mjs");
    const original = await readFile(server);
    const changed = Buffer.from(original);
    const at = changed.lastIndexOf(0x0a); // the final newline becomes a space: one byte
    changed[at] = 0x20;
    await writeFile(server, changed);
    try {
      const appsBefore = appsTree(gw.home);
      const install = await post(gw, "/api/apps", { source: bundle, consent: consented });
      expect(install.status).toBe(409);
      expect(install.body.error.code).toBe("consent_required");
      const fresh = await post(gw, "/api/apps/preview", { source: bundle });
      expect(install.body.error.detail.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(install.body.error.detail.digest).not.toBe(consented);
      expect(install.body.error.detail.digest).toBe(fresh.body.digest);
      expect(install.body.error.detail.review).toEqual(fresh.body.review);

      expect(existsSync(join(gw.home, "apps", "node-notes"))).toBe(false);
      expect(appsTree(gw.home)).toEqual(appsBefore);
      expect(quarantineEntries(gw.home)).toEqual([]);
      expect((await gw.fetch("/api/apps/node-notes")).status).toBe(404);
      const failed = (await securityEvents(gw, "app_install_failed")).find((e) => e.subject === bundle);
      expect(failed?.detail.code).toBe("consent_required");
    } finally {
      await writeFile(server, original);
    }
  });

  it("an unchanged bundle installs, and its installed bytes hash to the consented digest", async () => {
    const preview = await post(gw, "/api/apps/preview", { source: bundle });
    const install = await post(gw, "/api/apps", { source: bundle, consent: preview.body.digest });
    expect(install.status, JSON.stringify(install.body)).toBe(200);
    expect(install.body.digest).toBe(preview.body.digest);
    expect(install.body.app).toMatchObject({
      name: "node-notes",
      origin: "local",
      lifecycle: "gateway",
      enabled: true,
      native: false,
    });

    const listed = await canonicalListing(join(gw.home, "apps", "node-notes"), { ignoreTopLevel: INSTALLER_OWNED });
    if (!listed.ok) throw new Error(`${listed.code} ${listed.message}`);
    expect(listed.listing.map((e) => e.path)).toContain("server.mjs");
    expect(consentDigest(listed.listing, preview.body.review)).toBe(preview.body.digest);
    expect(quarantineEntries(gw.home)).toEqual([]);
  });

  it('uninstall keeps data/ unless the body is {"purge_data": true}', async () => {
    const appDir = join(gw.home, "apps", "node-notes");
    const notes = (text: string) => writeFile(join(appDir, "data", "notes.json"), text);
    /** Files under <home>/apps, outside the app's own folder, that hold `text`. */
    const copiesOf = (text: string) =>
      appsTree(gw.home)
        .filter((p) => !p.endsWith("/") && !p.includes(" -> ") && !p.startsWith("node-notes/"))
        .map((p) => p.replace(/ \d+$/, ""))
        .filter((p) => readFileSync(join(gw.home, "apps", p), "utf8") === text);
    expect(existsSync(join(appDir, "data"))).toBe(true); // node-notes declares storage
    await notes('["keep me"]\n');

    const kept = await del(gw, "/api/apps/node-notes", {});
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body).toEqual({ removed: "node-notes", data_kept: true, secrets_taken_back: [] });
    expect(existsSync(appDir)).toBe(false);
    expect((await gw.fetch("/api/apps/node-notes")).status).toBe(404);
    expect(copiesOf('["keep me"]\n')).toEqual([".node-notes.data/notes.json"]);

    const preview = await post(gw, "/api/apps/preview", { source: bundle });
    expect(preview.body.review.keptData).toMatchObject({ version: "0.1.0", parkedAt: expect.any(String) });
    expect(
      (await post(gw, "/api/apps", { source: bundle, consent: preview.body.digest, adopt_data: true })).status,
    ).toBe(200);
    // A reinstall of the name takes the parked data back when the owner says so.
    expect(readFileSync(join(appDir, "data", "notes.json"), "utf8")).toBe('["keep me"]\n');
    expect(existsSync(join(gw.home, "apps", ".node-notes.data"))).toBe(false);
    await notes('["purge me"]\n');
    const purged = await del(gw, "/api/apps/node-notes", { purge_data: true });
    expect(purged.status).toBe(200);
    expect(purged.body).toEqual({ removed: "node-notes", data_kept: false, secrets_taken_back: [] });
    expect(existsSync(appDir)).toBe(false);
    expect(copiesOf('["purge me"]\n')).toEqual([]);
    const rows = (await securityEvents(gw, "app_uninstalled")).filter((e) => e.subject === "node-notes");
    expect(rows.map((e) => e.detail.purge_data)).toEqual([true, false]);
  });

  it("the native welcome app is listed as builtin, locked and native, and cannot be removed", async () => {
    const list = (await (await gw.fetch("/api/apps")).json()) as { apps: Json[] };
    const welcome = list.apps.find((a) => a.name === "welcome");
    expect(welcome).toMatchObject({ origin: "builtin", lifecycle: "locked", native: true });
    const removed = await del(gw, "/api/apps/welcome", {});
    expect(removed.status).toBe(400);
    expect(removed.body.error.code).toBe("app_locked");
    expect(existsSync(join(gw.home, "apps", "welcome", "app.json"))).toBe(true);
    expect((await gw.fetch("/api/apps/welcome")).status).toBe(200);
  });
});

describe("the fixture apps install end to end through the CLI", () => {
  let gw: RunningGateway;
  const installed = new Map<string, Json>();
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
  });

  it.each([
    ["node-notes", NODE_NOTES],
    ["py-echo", PY_ECHO],
  ])("apps install %s --yes --json exits 0 and installs it", async (name, folder) => {
    const result = await runCli(["apps", "install", folder, "--yes", "--json", "--home", gw.home], {}, 120_000);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout) as Json;
    expect(answer.app.name).toBe(name);
    expect(answer.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    installed.set(name, answer);
    // Progress goes to stderr, every step to its end; stdout stays the one JSON answer.
    expect(result.stderr).toContain("  stage: done");
    expect(result.stderr).toContain(
      name === "py-echo" ? "  python dependencies: done" : "  python dependencies: skipped",
    );
    expect(result.stderr).toContain("  move into place: done");
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(gw.home, "apps", name, "app.json"))).toBe(true);
    expect(quarantineEntries(gw.home)).toEqual([]);
  });

  it("py-echo's SDK wheel is installed into its own venv", () => {
    const python = join(gw.home, "apps", "py-echo", "venv", "bin", "python");
    expect(existsSync(python)).toBe(true);
    const out = execFileSync(python, ["-c", "import personalclaw_verify, sys; print(sys.prefix)"], {
      encoding: "utf8",
    });
    expect(out.trim()).toBe(join(gw.home, "apps", "py-echo", "venv"));
  });

  it("both are listed as local, gateway-managed, enabled and not native, with an app_installed row naming the digest", async () => {
    expect([...installed.keys()].sort()).toEqual(["node-notes", "py-echo"]);
    const list = (await (await gw.fetch("/api/apps")).json()) as { apps: Json[] };
    const rows = await securityEvents(gw, "app_installed");
    for (const [name, answer] of installed) {
      expect(list.apps.find((a) => a.name === name)).toMatchObject({
        origin: "local",
        lifecycle: "gateway",
        enabled: true,
        native: false,
      });
      const row = rows.find((e) => e.subject === name);
      expect(row, `app_installed row for ${name}`).toBeDefined();
      // A sha256:-labelled digest is evidence, not a credential: the row names it whole.
      expect(row!.detail.consent).toBe(answer.digest);
    }
  });

  it("apps list --json shows them too, and the offline preview of a fresh home agrees on the digest", async () => {
    const listed = await runCli(["apps", "list", "--json", "--home", gw.home]);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout).apps as Json[]).map((a) => a.name)).toEqual(
      expect.arrayContaining(["node-notes", "py-echo", "welcome"]),
    );
    const empty = makeHome("pc-offline-");
    try {
      const offline = await runCli(["apps", "preview", NODE_NOTES, "--json", "--home", empty]);
      expect(offline.code).toBe(0);
      expect(JSON.parse(offline.stdout).digest).toBe(installed.get("node-notes")!.digest);
    } finally {
      removeHome(empty);
    }
  });
});

describe("install hooks that fail or time out", () => {
  let gw: RunningGateway;
  let work: string;
  const hookBundle = async (name: string, script: string): Promise<string> => {
    const dir = join(work, name);
    await writeBundle(dir, {
      "app.json": JSON.stringify({
        name,
        version: "1.0.0",
        setup: { onInstall: { command: "/bin/sh", args: ["hook.sh"] } },
      }),
      "hook.sh": script,
    });
    return dir;
  };
  beforeAll(async () => {
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1", PERSONALCLAW_HOOK_TIMEOUT_S: "2" } });
    work = await tempFolder("pc-hooks-");
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    await rm(work, { recursive: true, force: true });
  });

  it.each([
    ["hook-fails", "install_hook_failed", "echo failing on purpose >&2\nexit 1\n"],
    ["hook-hangs", "install_hook_timeout", "sleep 30\n"],
  ])("%s leaves no folder and no record, answering %s naming the step", async (name, code, script) => {
    const source = await hookBundle(name, script);
    const preview = await post(gw, "/api/apps/preview", { source });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.review.installHook).toMatchObject({ command: "/bin/sh", args: ["hook.sh"], timeoutSeconds: 2 });
    const appsBefore = appsTree(gw.home);

    const started = Date.now();
    const install = await post(gw, "/api/apps", { source, consent: preview.body.digest });
    expect(install.status, JSON.stringify(install.body)).toBe(422);
    expect(install.body.error.code).toBe(code);
    expect(install.body.error.detail.step).toBe("install_hook");
    if (code === "install_hook_failed") expect(install.body.error.message).toContain("exit status 1");
    if (code === "install_hook_timeout") {
      expect(install.body.error.message).toContain("2 s");
      expect(Date.now() - started).toBeLessThan(15_000);
    }

    expect(existsSync(join(gw.home, "apps", name))).toBe(false);
    expect(appsTree(gw.home)).toEqual(appsBefore);
    expect(quarantineEntries(gw.home)).toEqual([]);
    expect((await gw.fetch(`/api/apps/${name}`)).status).toBe(404);
    const list = (await (await gw.fetch("/api/apps")).json()) as { apps: Json[] };
    expect(list.apps.map((a) => a.name)).not.toContain(name);
    const row = (await securityEvents(gw, "app_install_failed")).find((e) => e.subject === source);
    expect(row?.detail).toMatchObject({ code, step: "install_hook" });
  });

  it("the same hook exiting 0 installs, so the failures above are the hooks' own", async () => {
    const source = await hookBundle("hook-works", "exit 0\n");
    const preview = await post(gw, "/api/apps/preview", { source });
    const install = await post(gw, "/api/apps", { source, consent: preview.body.digest });
    expect(install.status, JSON.stringify(install.body)).toBe(200);
    expect(existsSync(join(gw.home, "apps", "hook-works", "hook.sh"))).toBe(true);
    expect((await del(gw, "/api/apps/hook-works", { purge_data: true })).status).toBe(200);
  });
});

describe("personalclaw apps preview with no gateway running", () => {
  const homes: string[] = [];
  const sandboxes: Sandbox[] = [];
  afterAll(async () => {
    for (const home of homes) removeHome(home);
    for (const sb of sandboxes) await sb.cleanup();
  });

  it("prints the review and digest of a fixture and exits 0, writing nothing into the home", async () => {
    const home = makeHome("pc-offline-");
    homes.push(home);
    const result = await runCli(["apps", "preview", PY_ECHO, "--json", "--home", home]);
    expect(result.code, result.stderr).toBe(0);
    const body = JSON.parse(result.stdout) as Json;
    expect(body.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(body.review.app).toMatchObject({ name: "py-echo", version: "0.1.0" });
    expect(body.review.pythonPackages).toEqual(["personalclaw-sdk==0.1.0"]);
    expect(body.review.verdict).toMatch(/^(clean|warning)$/);
    expect(readdirSync(home)).toEqual([]);
  });

  it("a hostile fixture exits 1 with the error envelope naming the path", async () => {
    const home = makeHome("pc-offline-");
    homes.push(home);
    const sb = await makeSandbox("link-escapes");
    sandboxes.push(sb);
    const before = await sb.snapshot();
    const result = await runCli(["apps", "preview", sb.bundle, "--json", "--home", home]);
    expect(result.code).toBe(1);
    const body = JSON.parse(result.stdout) as Json;
    expect(body).toEqual({ error: { code: "bundle_link_escapes", message: expect.any(String), path: "stolen" } });
    expect(await sb.snapshot()).toBe(before);
    expect(await readFile(sb.sentinel, "utf8")).toBe(SENTINEL_TEXT);
    expect(readdirSync(home)).toEqual([]);
  });
});

describe("two installs of one name at once", () => {
  it("installs one and answers the other 409 app_exists, leaving one folder and one record", async () => {
    const gw = await startGateway();
    try {
      const bundle = await tempFolder("pc-twice-");
      await writeBundle(bundle, {
        "app.json": JSON.stringify({ name: "twice", version: "1.0.0", ui: { entry: "ui/index.html" } }),
        "ui/index.html": "<p>twice</p>",
      });
      const preview = await post(gw, "/api/apps/preview", { source: bundle });
      const answers = await Promise.all(
        [1, 2, 3].map(() => post(gw, "/api/apps", { source: bundle, consent: preview.body.digest })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
      for (const refused of answers.filter((a) => a.status === 409)) expect(refused.body.error.code).toBe("app_exists");
      const apps = (await gw.fetch("/api/apps").then((r) => r.json())).apps.filter((a: Json) => a.name === "twice");
      expect(apps).toHaveLength(1);
      expect(readdirSync(join(gw.home, "apps")).filter((n) => n === "twice")).toHaveLength(1);
      expect(quarantineEntries(gw.home)).toEqual([]);
      await rm(bundle, { recursive: true, force: true });
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });
});
