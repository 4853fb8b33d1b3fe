// Install rules of issue 11 against a really started gateway: the UI folder rule and links in
// it, the strict manifest reader, wheels only, registry npm packages only, kept data that
// belongs to an install, installs that are all or nothing, native records only by the
// bridge's proof, and app inbox quotas. Each test asserts the answer and what was (not) written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, unlinkSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeSandbox, type Sandbox } from "./fixtures/hostile/sandbox";
import { rawRequest, removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

type Json = Record<string, any>;
const UNRELATED_DIGEST = `sha256:${"0".repeat(64)}`;

async function send(
  gw: RunningGateway,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const response = await gw.fetch(path, {
    method,
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
  return { status: response.status, body: (await response.json()) as Json };
}
const post = (gw: RunningGateway, path: string, body: unknown, headers?: Record<string, string>) =>
  send(gw, "POST", path, body, headers);

/** Every name under <home>/apps except the quarantine. */
function appsEntries(home: string): string[] {
  const root = join(home, "apps");
  return existsSync(root)
    ? readdirSync(root)
        .filter((n) => n !== ".quarantine")
        .sort()
    : [];
}
function quarantineEntries(home: string): string[] {
  const dir = join(home, "apps", ".quarantine");
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function writeBundle(dir: string, files: Record<string, string>): Promise<string> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(dir, rel, ".."), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  return dir;
}

/** Previews and installs `source` with its own digest; returns the install answer. */
async function previewAndInstall(
  gw: RunningGateway,
  source: string,
  extra: Json = {},
  headers: Record<string, string> = {},
) {
  const preview = await post(gw, "/api/apps/preview", { source });
  expect(preview.status, JSON.stringify(preview.body)).toBe(200);
  const install = await post(gw, "/api/apps", { source, consent: preview.body.digest, ...extra }, headers);
  return { preview, install };
}

interface RefusedCase {
  title: string;
  fixture?: string;
  make?: (dir: string) => Promise<unknown>;
  status: number;
  code: string;
  path: string;
  field?: string;
  key?: string;
}

const manifest = (m: Json) => JSON.stringify({ version: "1.0.0", ...m });
const deepValue = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

const NON_REGISTRY_NPM = [
  "left-pad@file:/etc",
  "left-pad@github:someone/left-pad",
  "left-pad@link:../left-pad",
  "left-pad@../left-pad",
  "left-pad@git+https://example.com/left-pad.git",
  "left-pad@https://example.com/left-pad.tgz",
  "https://example.com/left-pad.tgz",
  "./left-pad-1.0.0.tgz",
  "left-pad.tgz",
  "someone/left-pad",
  "alias@npm:left-pad@1.3.0",
  "left-pad@latest",
];

const REFUSED: RefusedCase[] = [
  {
    title: "ui.entry at the bundle root",
    fixture: "ui-entry-at-root",
    status: 422,
    code: "manifest_ui_folder_invalid",
    path: "app.json",
    field: "ui.entry",
  },
  {
    title: "ui.entry inside data/",
    fixture: "ui-entry-in-data",
    status: 422,
    code: "manifest_ui_folder_invalid",
    path: "app.json",
    field: "ui.entry",
  },
  {
    title: "ui.entry in the folder of the backend's entry point",
    make: (dir) =>
      writeBundle(dir, {
        "app.json": manifest({
          name: "ui-beside-code",
          ui: { entry: "src/index.html" },
          backend: { command: "node", args: ["src/server.js"], entryPoint: "src/server.js" },
        }),
        "src/index.html": "<p>x</p>",
        "src/server.js": "export {};\n",
      }),
    status: 422,
    code: "manifest_ui_folder_invalid",
    path: "app.json",
    field: "ui.entry",
  },
  {
    title: "a link inside the UI folder",
    fixture: "ui-link",
    status: 422,
    code: "bundle_link_in_ui",
    path: "ui/alias.html",
  },
  {
    title: "a duplicate key in app.json",
    fixture: "manifest-duplicate-key",
    status: 422,
    code: "manifest_key_refused",
    path: "app.json",
    key: "api",
  },
  {
    title: "a __proto__ key in app.json",
    fixture: "manifest-proto-key",
    status: 422,
    code: "manifest_key_refused",
    path: "app.json",
    key: "__proto__",
  },
  {
    title: "a constructor key deep in app.json",
    make: (dir) =>
      writeBundle(dir, {
        "app.json":
          '{"name":"ctor-key","version":"1.0.0","crons":[],"extra":{"list":[{"constructor":{"prototype":1}}]}}',
      }),
    status: 422,
    code: "manifest_key_refused",
    path: "app.json",
    key: "constructor",
  },
  {
    title: "a deeply nested app.json",
    make: (dir) =>
      writeBundle(dir, { "app.json": `{"name":"deep-nest","version":"1.0.0","extra":${deepValue(5000)}}` }),
    status: 422,
    code: "manifest_invalid",
    path: "app.json",
    field: "app.json",
  },
  {
    title: "a .tar.gz source archive in wheels/",
    fixture: "wheels-sdist",
    status: 422,
    code: "bundle_wheel_not_binary",
    path: "wheels/evil-1.0.tar.gz",
  },
  {
    title: "a .zip source archive in wheels/",
    make: (dir) =>
      writeBundle(dir, {
        "app.json": manifest({ name: "zip-sdist", dependencies: { pythonDependencies: ["evil==1.0"] } }),
        "wheels/evil-1.0.zip": "PK not really\n",
        "wheels/ok-1.0-py3-none-any.whl": "x",
      }),
    status: 422,
    code: "bundle_wheel_not_binary",
    path: "wheels/evil-1.0.zip",
  },
  ...NON_REGISTRY_NPM.map((spec, i): RefusedCase => ({
    title: `the npm form ${spec}`,
    make: (dir) =>
      writeBundle(dir, { "app.json": manifest({ name: `npm-form-${i}`, dependencies: { npmPackages: [spec] } }) }),
    status: 422,
    code: "manifest_npm_not_registry",
    path: "app.json",
    field: "dependencies.npmPackages[0]",
  })),
];

describe("bundles the install rules refuse at preview", () => {
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

  it.each(REFUSED.map((c) => [c.title, c] as const))(
    "%s is refused by preview and install, naming it, writing nothing",
    async (_title, c) => {
      const sb = await makeSandbox(c.fixture);
      sandboxes.push(sb);
      if (c.make) await c.make(sb.bundle);
      const before = appsEntries(gw.home);
      const preview = await post(gw, "/api/apps/preview", { source: sb.bundle });
      const install = await post(gw, "/api/apps", { source: sb.bundle, consent: UNRELATED_DIGEST });
      for (const answer of [preview, install]) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(c.status);
        expect(answer.body.error.code).toBe(c.code);
        expect(answer.body.error.detail.path).toBe(c.path);
        if (c.field) expect(answer.body.error.detail.field).toBe(c.field);
        if (c.key) expect(answer.body.error.detail.key).toBe(c.key);
      }
      expect(appsEntries(gw.home)).toEqual(before);
      expect(quarantineEntries(gw.home)).toEqual([]);
    },
  );

  it("the registry npm forms pass the same screen (the refusals above are the forms')", async () => {
    const sb = await makeSandbox();
    sandboxes.push(sb);
    await writeBundle(sb.bundle, {
      "app.json": manifest({
        name: "npm-registry-forms",
        dependencies: { npmPackages: ["left-pad", "left-pad@1.3.0", "left-pad@^1.2", "@scope/name@~1.0.0"] },
      }),
    });
    const preview = await post(gw, "/api/apps/preview", { source: sb.bundle });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.review.npmPackages.packages).toEqual([
      "left-pad",
      "left-pad@1.3.0",
      "left-pad@^1.2",
      "@scope/name@~1.0.0",
    ]);
  });
});

describe("UI files are only the installed UI folder's own bytes", () => {
  let gw: RunningGateway;
  let work: string;
  const name = "ui-confined";
  const appDir = () => join(gw.home, "apps", name);
  beforeAll(async () => {
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
    work = await mkdtemp(join(tmpdir(), "pc-ui-confined-"));
    const source = await writeBundle(join(work, name), {
      "app.json": manifest({ name, ui: { entry: "ui/index.html" }, permissions: { storage: true } }),
      "ui/index.html": "<p>confined</p>",
      "ui/style.css": "p { color: red; }",
      "notes.txt": "beside the UI, never served",
    });
    const { install } = await previewAndInstall(gw, source);
    expect(install.status, JSON.stringify(install.body)).toBe(200);
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    await rm(work, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    rawRequest(gw.port, { path, headers: { host: `127.0.0.1:${gw.port}`, ...headers } });

  it("serves a declared UI file with no wildcard CORS header, and names only the opaque origin when asked from it", async () => {
    const plain = await get(`/apps/${name}/style.css`);
    expect(plain.status).toBe(200);
    expect(plain.body).toBe("p { color: red; }");
    expect(plain.headers["access-control-allow-origin"]).toBeUndefined();
    expect(plain.headers["content-security-policy"]).toContain("sandbox");
    const fromSandbox = await get(`/apps/${name}/style.css`, {
      origin: "null",
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "cors",
      "sec-fetch-dest": "script",
    });
    expect(fromSandbox.status).toBe(200);
    expect(fromSandbox.headers["access-control-allow-origin"]).toBe("null");
  });

  it("a link the backend writes into data/ is never served, nor anything else of data/ or beside the UI folder", async () => {
    const secret = join(gw.home, ".local_secret");
    symlinkSync(secret, join(appDir(), "data", "stolen"));
    await writeFile(join(appDir(), "data", "plain.txt"), "app data");
    const secretText = readFileSync(secret, "utf8").trim();
    for (const path of [
      `/apps/${name}/data/stolen`,
      `/apps/${name}/data/plain.txt`,
      `/apps/${name}/notes.txt`,
      `/apps/${name}/app.json`,
      `/apps/${name}/../data/stolen`,
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body).not.toContain(secretText);
    }
    // A dot segment spelled in percent-encoding is resolved by the URL parser before routing;
    // it must not land on the app's entry (or anything else of it) either.
    const encoded = await get(`/apps/${name}/%2e%2e/data/stolen`);
    expect(encoded.status).toBe(400); // refused before routing: an encoded dot segment is ambiguous
    expect(encoded.body).toContain("request_path_ambiguous");
    expect(encoded.body).not.toContain(secretText);
    expect(encoded.body).not.toContain("<p>confined</p>");
  });

  it("a link planted in the installed UI folder later, or a UI file swapped for one, is 404", async () => {
    const secret = join(gw.home, ".local_secret");
    symlinkSync(secret, join(appDir(), "ui", "planted.txt"));
    expect((await get(`/apps/${name}/planted.txt`)).status).toBe(404);
    const css = join(appDir(), "ui", "style.css");
    unlinkSync(css);
    symlinkSync(secret, css);
    const swapped = await get(`/apps/${name}/style.css`);
    expect(swapped.status).toBe(404);
    expect(swapped.body).not.toContain(readFileSync(secret, "utf8").trim());
  });

  it("refuses another site's navigation and CORS read, and keeps serving the sandboxed page's own cross-site subresource loads", async () => {
    const navigate = await get(`/apps/${name}/index.html`, {
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
    });
    expect(navigate.status).toBe(403);
    expect(JSON.parse(navigate.body).error.code).toBe("origin_not_allowed");
    const entry = await get(`/apps/${name}/`, {
      authorization: `Bearer ${gw.token}`,
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
    });
    expect(entry.status).toBe(403);
    const read = await get(`/apps/${name}/index.html`, {
      origin: "https://evil.example",
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "cors",
      "sec-fetch-dest": "empty",
    });
    expect(read.status).toBe(403);
    const image = await get(`/apps/${name}/index.html`, {
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "no-cors",
      "sec-fetch-dest": "image",
    });
    expect(image.status).toBe(200);
  });
});

describe("kept data belongs to the install it came from", () => {
  let gw: RunningGateway;
  let work: string;
  const name = "keeper";
  const appDir = () => join(gw.home, "apps", name);
  const bundle = (version: string, marker: string) =>
    writeBundle(join(work, `${name}-${version}`), {
      "app.json": manifest({ name, version, ui: { entry: "ui/index.html" }, permissions: { storage: true } }),
      "ui/index.html": `<p>${marker}</p>`,
    });
  beforeAll(async () => {
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
    work = await mkdtemp(join(tmpdir(), "pc-keeper-"));
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    await rm(work, { recursive: true, force: true });
  });

  it("a same-name bundle from other bytes starts fresh without adopt_data, sees whose data is kept, and adopts it only with adopt_data: true", async () => {
    const first = await previewAndInstall(gw, await bundle("1.0.0", "first author"));
    expect(first.install.status).toBe(200);
    await writeFile(join(appDir(), "data", "notes.json"), "first author's notes");
    expect((await send(gw, "DELETE", `/api/apps/${name}`, {})).status).toBe(200);

    // The parked data records whose it is, owner-only.
    const recordPath = join(gw.home, "apps", `.${name}.data.json`);
    expect(statSync(recordPath).mode & 0o777).toBe(0o600);
    const record = JSON.parse(readFileSync(recordPath, "utf8"));
    expect(record).toMatchObject({
      name,
      version: "1.0.0",
      consentDigest: first.preview.body.digest,
      parkedAt: expect.any(String),
    });
    const listed = await gw.fetch("/api/apps/parked");
    expect(((await listed.json()) as Json).parked).toEqual([
      { name, version: "1.0.0", consentDigest: first.preview.body.digest, parkedAt: record.parkedAt },
    ]);

    const other = await bundle("2.0.0", "another author");
    const preview = await post(gw, "/api/apps/preview", { source: other });
    expect(preview.body.review.keptData).toMatchObject({
      version: "1.0.0",
      parkedAt: record.parkedAt,
      consentDigest: first.preview.body.digest,
    });
    expect(preview.body.review.keptData.note).toContain("kept data from 1.0.0 of");
    const text = await runCli(["apps", "preview", other, "--home", gw.home]);
    expect(text.stdout).toContain(`kept data from 1.0.0 of ${record.parkedAt}`);

    const notBoolean = await post(gw, "/api/apps", { source: other, consent: preview.body.digest, adopt_data: "yes" });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.error.code).toBe("field_not_a_boolean");
    expect(existsSync(appDir())).toBe(false);

    const fresh = await post(gw, "/api/apps", { source: other, consent: preview.body.digest });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(readdirSync(join(appDir(), "data"))).toEqual([]);
    expect(readFileSync(join(gw.home, "apps", `.${name}.data`, "notes.json"), "utf8")).toBe("first author's notes");

    // Parking this install's data over the earlier one would destroy it: refused, nothing torn down.
    const overPark = await send(gw, "DELETE", `/api/apps/${name}`, {});
    expect(overPark.status).toBe(409);
    expect(overPark.body.error.code).toBe("parked_data_exists");
    expect(existsSync(appDir())).toBe(true);
    expect((await send(gw, "DELETE", `/api/apps/${name}`, { purge_data: true })).status).toBe(200);
    expect(readFileSync(join(gw.home, "apps", `.${name}.data`, "notes.json"), "utf8")).toBe("first author's notes");

    const again = await post(gw, "/api/apps/preview", { source: other });
    const adopted = await post(gw, "/api/apps", { source: other, consent: again.body.digest, adopt_data: true });
    expect(adopted.status, JSON.stringify(adopted.body)).toBe(200);
    expect(readFileSync(join(appDir(), "data", "notes.json"), "utf8")).toBe("first author's notes");
    expect(existsSync(join(gw.home, "apps", `.${name}.data`))).toBe(false);
    expect(existsSync(recordPath)).toBe(false);
  });

  it("apps list --parked lists kept data and apps purge removes it; a second purge is 404", async () => {
    expect((await send(gw, "DELETE", `/api/apps/${name}`, {})).status).toBe(200);
    const listed = await runCli(["apps", "list", "--parked", "--json", "--home", gw.home]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).parked.map((p: Json) => [p.name, p.version])).toEqual([[name, "2.0.0"]]);
    const purged = await runCli(["apps", "purge", name, "--json", "--home", gw.home]);
    expect(purged.code, purged.stderr + purged.stdout).toBe(0);
    expect(existsSync(join(gw.home, "apps", `.${name}.data`))).toBe(false);
    expect(existsSync(join(gw.home, "apps", `.${name}.data.json`))).toBe(false);
    const twice = await send(gw, "DELETE", `/api/apps/parked/${name}`, {});
    expect(twice.status).toBe(404);
    expect(twice.body.error.code).toBe("parked_data_not_found");
    const asApp = await gw.fetch("/api/apps/parked", { owner: false });
    expect(asApp.status).not.toBe(200);
  });

  it("adopt_data: true with nothing parked is refused before anything is written", async () => {
    const source = await bundle("3.0.0", "third");
    const preview = await post(gw, "/api/apps/preview", { source });
    const refused = await post(gw, "/api/apps", { source, consent: preview.body.digest, adopt_data: true });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe("parked_data_not_found");
    expect(existsSync(appDir())).toBe(false);
    expect(quarantineEntries(gw.home)).toEqual([]);
  });
});

describe("an install is all or nothing", () => {
  let gw: RunningGateway;
  let work: string;
  beforeAll(async () => {
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
    work = await mkdtemp(join(tmpdir(), "pc-all-or-nothing-"));
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    await rm(work, { recursive: true, force: true });
  });

  it("a failure after the move into place leaves no folder, no record and a reusable name", async () => {
    const source = await writeBundle(join(work, "late-fail"), {
      "app.json": manifest({ name: "late-fail", ui: { entry: "ui/index.html" } }),
      "ui/index.html": "<p>late</p>",
    });
    const before = appsEntries(gw.home);
    const { install } = await previewAndInstall(gw, source, {}, { "x-test-fail": "record" });
    expect(install.status, JSON.stringify(install.body)).toBe(422);
    expect(install.body.error).toMatchObject({ code: "install_step_failed", detail: { step: "record" } });
    expect(appsEntries(gw.home)).toEqual(before);
    expect(quarantineEntries(gw.home)).toEqual([]);
    expect((await gw.fetch("/api/apps/late-fail")).status).toBe(404);

    const retry = await previewAndInstall(gw, source);
    expect(retry.install.status, JSON.stringify(retry.install.body)).toBe(200);
    expect(existsSync(join(gw.home, "apps", "late-fail", "ui", "index.html"))).toBe(true);
  });

  it("a late failure of an install that adopted kept data puts the data back where it was parked", async () => {
    const source = await writeBundle(join(work, "late-keeper"), {
      "app.json": manifest({ name: "late-keeper", permissions: { storage: true } }),
    });
    expect((await previewAndInstall(gw, source)).install.status).toBe(200);
    await writeFile(join(gw.home, "apps", "late-keeper", "data", "kept.txt"), "kept");
    expect((await send(gw, "DELETE", "/api/apps/late-keeper", {})).status).toBe(200);
    const recordBefore = readFileSync(join(gw.home, "apps", ".late-keeper.data.json"), "utf8");

    const { install } = await previewAndInstall(gw, source, { adopt_data: true }, { "x-test-fail": "record" });
    expect(install.status).toBe(422);
    expect(existsSync(join(gw.home, "apps", "late-keeper"))).toBe(false);
    expect(readFileSync(join(gw.home, "apps", ".late-keeper.data", "kept.txt"), "utf8")).toBe("kept");
    expect(JSON.parse(readFileSync(join(gw.home, "apps", ".late-keeper.data.json"), "utf8"))).toEqual(
      JSON.parse(recordBefore),
    );
    expect(quarantineEntries(gw.home)).toEqual([]);
  });

  it("a manifest too large to record is refused before the move, leaving nothing and the name free", async () => {
    const source = await writeBundle(join(work, "huge-record"), {
      "app.json": manifest({ name: "huge-record", notes: "n".repeat(600 * 1024) }),
    });
    const before = appsEntries(gw.home);
    const { install } = await previewAndInstall(gw, source);
    expect(install.status).toBe(422);
    expect(install.body.error).toMatchObject({ code: "install_not_recordable", detail: { step: "verify" } });
    expect(appsEntries(gw.home)).toEqual(before);
    expect(quarantineEntries(gw.home)).toEqual([]);
    expect((await gw.fetch("/api/apps/huge-record")).status).toBe(404);
  });

  it("a deeply nested app.json is refused at preview and the name stays free", async () => {
    const deep = await writeBundle(join(work, "deep"), {
      "app.json": `{"name":"deep-app","version":"1.0.0","extra":${deepValue(3000)}}`,
    });
    const refused = await post(gw, "/api/apps/preview", { source: deep });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("manifest_invalid");
    expect(existsSync(join(gw.home, "apps", "deep-app"))).toBe(false);
    const plain = await writeBundle(join(work, "deep-fixed"), {
      "app.json": manifest({ name: "deep-app", extra: JSON.parse(deepValue(20)) }),
    });
    expect((await previewAndInstall(gw, plain)).install.status).toBe(200);
  });
});

describe("the native-record route and app inboxes", () => {
  let gw: RunningGateway;
  let work: string;
  let internalSecret: string;
  const internal = (body: unknown) =>
    rawRequest(gw.port, {
      method: "POST",
      path: "/api/internal/apps/native",
      headers: {
        host: `127.0.0.1:${gw.port}`,
        "x-internal-secret": internalSecret,
        "x-personalclaw-work": "bridge",
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
  beforeAll(async () => {
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
    work = await mkdtemp(join(tmpdir(), "pc-native-inbox-"));
    internalSecret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    await rm(work, { recursive: true, force: true });
  });

  it("refuses to record an app from outside apps/native/ even with the internal credential, and records the real one", async () => {
    const source = await writeBundle(join(work, "squatter"), {
      "app.json": manifest({ name: "squatter", native: true }),
    });
    const foreign = await internal({ apps: [{ source, digest: UNRELATED_DIGEST }] });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.code).toBe("native_app_unproven");
    const manifestSmuggled = await internal({
      apps: [{ source, digest: UNRELATED_DIGEST, manifest: { name: "squatter", version: "1.0.0" } }],
    });
    expect(manifestSmuggled.status).toBe(400);
    const welcome = (await (await gw.fetch("/api/apps/welcome")).json()) as Json;
    const wrongDigest = await internal({
      apps: [{ source: join(repoRoot, "apps", "native", "welcome"), digest: UNRELATED_DIGEST }],
    });
    expect(wrongDigest.status).toBe(403);
    expect((await gw.fetch("/api/apps/squatter")).status).toBe(404);
    const list = (await (await gw.fetch("/api/apps")).json()) as { apps: Json[] };
    expect(list.apps.filter((a) => a.lifecycle === "locked").map((a) => a.name)).toEqual(["welcome"]);
    expect(welcome.consentDigest).toMatch(/^sha256:/);
  });

  it("an inbox past its quota refuses with app_inbox_full, an oversized message with app_message_too_large", async () => {
    for (const [name, permissions] of [
      ["inbox-sender", { appMessaging: ["inbox-target"] }],
      ["inbox-target", {}],
    ] as const) {
      const source = await writeBundle(join(work, name), {
        "app.json": manifest({ name, ui: { entry: "ui/index.html" }, permissions }),
        "ui/index.html": "<p>inbox</p>",
      });
      expect((await previewAndInstall(gw, source)).install.status).toBe(200);
    }
    const tokenOf = async (name: string) => {
      const redirect = await gw.fetch(`/apps/${name}/`);
      expect(redirect.status).toBe(302);
      return new URL(redirect.headers.get("location")!, gw.base).searchParams.get("app_token")!;
    };
    const sender = await tokenOf("inbox-sender");
    const target = await tokenOf("inbox-target");
    const message = (body: unknown) =>
      post(gw, "/api/apps/message", { to: "inbox-target", body }, { authorization: `Bearer ${sender}` });

    const tooLarge = await message("x".repeat(70 * 1024));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe("app_message_too_large");

    // Bytes: 60 000-character bodies fill the 4 MiB inbox after 69 of them.
    const big = "y".repeat(60_000);
    for (let i = 0; i < 69; i++) expect((await message(big)).status).toBe(200);
    const full = await message(big);
    expect(full.status).toBe(429);
    expect(full.body.error.code).toBe("app_inbox_full");
    const drained = await gw.fetch("/api/apps/message", { headers: { authorization: `Bearer ${target}` } });
    expect(((await drained.json()) as Json).messages).toHaveLength(69);

    // Count: 1000 small messages, then the next is refused.
    for (let batch = 0; batch < 50; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => message({ n: batch })));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    }
    const overCount = await message({ n: "one more" });
    expect(overCount.status).toBe(429);
    expect(overCount.body.error.code).toBe("app_inbox_full");
    // The first refusal is a row; identical repeats are counted in its window (refusal counting).
    const rows = (await (await gw.fetch("/api/security/events?kind=app_inbox_full")).json()) as { events: Json[] };
    expect(rows.events.length).toBeGreaterThanOrEqual(1);
    expect(rows.events[0]!.outcome).toBe("refused");
  }, 120_000);
});
