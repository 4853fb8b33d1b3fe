// The SDKs as an app author installs them: each from its folder in this repository into a fresh
// app, offline, then used from that app the way the README shows: the Node package by its name
// with its type declarations, the Python one by pip through its pyproject.toml with its hints.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../test/helpers/gateway";
import { loadVectors } from "./test-vectors";

const run = promisify(execFile);
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir(), PYTHONDONTWRITEBYTECODE: "1" };
const vector = loadVectors().signing[0]!;
const headerValue = vector.header;
const folders: string[] = [];
const appFolder = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

describe("the Node SDK as a package", () => {
  const sdk = join(repoRoot, "apps", "sdk", "node");
  let app: string;
  beforeAll(async () => {
    app = appFolder("pc-node-app-");
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "an-app", private: true, type: "module" }));
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", sdk], {
      cwd: app,
      env: { ...env, npm_config_cache: join(app, ".npm-cache") },
    });
  }, 120_000);

  it("has a name, a version, its types and its exports", () => {
    const manifest = JSON.parse(readFileSync(join(sdk, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: "@personalclaw/app-sdk",
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      types: "index.d.ts",
      exports: { ".": { types: "./index.d.ts", default: "./index.js" } },
    });
    const installed = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(installed.dependencies["@personalclaw/app-sdk"]).toMatch(/^file:/);
  });

  it("verifies a gateway signature, imported by its name in the app", async () => {
    const script = [
      'import { createVerifier } from "@personalclaw/app-sdk";',
      `const verifier = createVerifier({ secret: ${JSON.stringify(vector.secret)}, now: () => ${vector.ts}, onRefusal: () => {} });`,
      `const request = { method: ${JSON.stringify(vector.method)}, target: ${JSON.stringify(vector.target)}, headerValues: [${JSON.stringify(headerValue)}], body: Buffer.from(${JSON.stringify(vector.body_base64)}, "base64") };`,
      "const first = verifier.verify(request);",
      "const replayed = verifier.verify(request);",
      "console.log(JSON.stringify({ first, replayed }));",
    ].join("\n");
    writeFileSync(join(app, "check.mjs"), script);
    const { stdout } = await run(process.execPath, ["check.mjs"], { cwd: app, env });
    expect(JSON.parse(stdout)).toEqual({ first: { ok: true }, replayed: { ok: false, reason: "signature_replayed" } });
  });

  it("type-checks a backend against its declarations, and refuses a wrong option", async () => {
    symlinkSync(join(repoRoot, "node_modules", "@types"), join(app, "node_modules", "@types"));
    writeFileSync(
      join(app, "server.ts"),
      [
        'import { createServer } from "node:http";',
        'import { withSignature, type RefusalReason } from "@personalclaw/app-sdk";',
        "const seen: RefusalReason[] = [];",
        "createServer(withSignature((req, res, body) => res.end(String(body.length + req.rawBody.length)), {",
        "  onRefusal: (reason) => void seen.push(reason),",
        "}));",
      ].join("\n"),
    );
    writeFileSync(
      join(app, "wrong.ts"),
      'import { createVerifier } from "@personalclaw/app-sdk";\ncreateVerifier({ windowS: "60" });\n',
    );
    const tsc = join(repoRoot, "node_modules", ".bin", "tsc");
    const args = ["--strict", "--noEmit", "--module", "nodenext", "--target", "es2022", "--types", "node"];
    const checked = await run(tsc, [...args, "server.ts", "wrong.ts"], { cwd: app }).then(
      () => "",
      (error: { stdout: string }) => error.stdout,
    );
    const errors = checked.split("\n").filter((line) => /error TS/.test(line));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^wrong\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
  }, 120_000);
});

describe("the Python SDK as a package", () => {
  const sdk = join(repoRoot, "apps", "sdk", "python");
  let venv: string;
  beforeAll(async () => {
    venv = join(appFolder("pc-py-app-"), "venv");
    await run("python3", ["-m", "venv", venv], { env });
    // Offline: no index, and the build backend is the folder's own (pyproject.toml), with no requirements.
    await run(join(venv, "bin", "pip"), ["install", "--no-index", "--disable-pip-version-check", sdk], {
      env,
      cwd: tmpdir(),
    });
  }, 120_000);

  it("declares its name and version in pyproject.toml, the ones its wheel carries", async () => {
    const pyproject = readFileSync(join(sdk, "pyproject.toml"), "utf8");
    expect(pyproject).toMatch(/^build-backend = "build_wheel"$/m);
    const { stdout } = await run(join(venv, "bin", "pip"), ["show", "personalclaw-sdk"], { env });
    const version = /^version = "(.+)"$/m.exec(pyproject)![1];
    expect(/^name = "(.+)"$/m.exec(pyproject)![1]).toBe("personalclaw-sdk");
    expect(stdout).toMatch(new RegExp(`^Version: ${version!.replace(/\./g, "\\.")}$`, "m"));
  });

  it("installs the package with its py.typed marker, and verifies a gateway signature", async () => {
    const site = (
      await run(join(venv, "bin", "python"), ["-c", "import personalclaw_verify as m; print(m.__file__)"], { env })
    ).stdout.trim();
    expect(site.startsWith(venv)).toBe(true);
    expect(existsSync(join(site, "..", "py.typed"))).toBe(true);
    const script = [
      "import base64, json, typing",
      "from personalclaw_verify import Verifier",
      `v = Verifier(secret=${JSON.stringify(vector.secret)}, now=lambda: ${vector.ts}, on_refusal=lambda reason, info: None)`,
      `request = (${JSON.stringify(vector.method)}, ${JSON.stringify(vector.target)}, [("X-PersonalClaw-Proxy", ${JSON.stringify(headerValue)})], base64.b64decode(${JSON.stringify(vector.body_base64)}))`,
      "hints = typing.get_type_hints(Verifier.refusal_reason)",
      "print(json.dumps({'first': v.verify(*request), 'replayed': v.refusal_reason(*request), 'returns': str(hints['return'])}))",
    ].join("\n");
    const { stdout } = await run(join(venv, "bin", "python"), ["-c", script], { env, cwd: tmpdir() });
    expect(JSON.parse(stdout)).toEqual({
      first: true,
      replayed: "signature_replayed",
      returns: "typing.Optional[str]",
    });
  });
});
