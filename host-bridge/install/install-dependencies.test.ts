// The package installers themselves, under real bubblewrap with real pip and npm: they run no
// byte of a bundle, even when handed what the manifest screen would have refused (a source
// archive, a local npm package with install scripts, a path outside the app).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxAvailability } from "../sandbox/bubblewrap";
import { boundsAvailability, DEFAULT_LIMITS } from "../sandbox/bounds";
import type { ConfinementContext } from "../sandbox/run-confined";
import { installerRun, installNpmPackages, installPythonDependencies } from "./install-dependencies";
import { EgressBrokers } from "../egress/brokers";
import type { EgressDecision } from "../egress/broker";
import { grantPatterns } from "../../kernel/rules/network-grant";

let root: string;
let home: string;
let ownerHome: string;
let ctx: ConfinementContext;
const logged: string[] = [];

/** Every canary a bundle's code would leave if it ran: in the owner's home, /var/tmp, or a folder the installer may write. */
function canariesUnder(...folders: string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.name.startsWith("pc-canary")) found.push(full);
      else if (entry.isDirectory() && !entry.isSymbolicLink()) walk(full);
    }
  };
  for (const folder of folders) if (existsSync(folder)) walk(folder);
  return found;
}

function makeApp(name: string): string {
  const appDir = path.join(home, "apps", ".quarantine", name);
  mkdirSync(appDir, { recursive: true });
  return appDir;
}

beforeAll(async () => {
  root = mkdtempSync("/var/tmp/pc-installers-");
  ownerHome = path.join(root, "owner");
  home = path.join(ownerHome, ".personalclaw");
  mkdirSync(home, { recursive: true });
  ctx = {
    home,
    ownerHome,
    sandboxMode: "on",
    sandbox: await sandboxAvailability(process.env.PATH),
    bounds: boundsAvailability(process.env.PATH),
    limits: DEFAULT_LIMITS,
    parentEnv: { PATH: process.env.PATH, HOME: ownerHome },
    passthrough: [],
    log: (line) => logged.push(line),
  };
  expect(ctx.sandbox.ok, ctx.sandbox.reason).toBe(true);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("pip", () => {
  it("refuses to build a source archive in wheels/: its setup.py never runs, in the sandbox or out", async () => {
    const appDir = makeApp("sdist");
    const src = path.join(root, "evil-src", "evil-0.1");
    mkdirSync(src, { recursive: true });
    const canary = `import os\nfor d in (os.environ.get("HOME",""), "/var/tmp", ${JSON.stringify(path.join(appDir, "venv"))}):\n    open(os.path.join(d, "pc-canary-sdist"), "w").write("ran")\n`;
    writeFileSync(
      path.join(src, "setup.py"),
      `${canary}from setuptools import setup\nsetup(name="evil", version="0.1")\n`,
    );
    writeFileSync(path.join(src, "PKG-INFO"), "Metadata-Version: 2.1\nName: evil\nVersion: 0.1\n");
    mkdirSync(path.join(appDir, "wheels"));
    execFileSync("tar", ["-czf", path.join(appDir, "wheels", "evil-0.1.tar.gz"), "-C", path.dirname(src), "evil-0.1"]);

    const result = await installPythonDependencies("sdist", appDir, ["evil==0.1"], ctx);
    expect(result.ok).toBe(false);
    expect(canariesUnder(ownerHome, "/var/tmp", appDir).filter((f) => f.endsWith("pc-canary-sdist"))).toEqual([]);
    expect(result.ok ? "" : result.reason).toMatch(/no matching distribution|could not find a version/i);
  });

  it("installs a wheel from wheels/ offline into the app's own venv, from a working directory outside the bundle", async () => {
    const appDir = makeApp("wheel");
    mkdirSync(path.join(appDir, "wheels"));
    const wheel = path.resolve("apps/fixtures/py-echo/wheels/personalclaw_sdk-0.1.0-py3-none-any.whl");
    writeFileSync(path.join(appDir, "wheels", path.basename(wheel)), execFileSync("cat", [wheel]));
    // Shadows of the modules the installer runs, at the bundle root: never imported.
    for (const mod of ["venv", "pip", "ensurepip", "sitecustomize"])
      writeFileSync(path.join(appDir, `${mod}.py`), `open("/var/tmp/pc-canary-${mod}", "w").write("ran")\n`);
    const result = await installPythonDependencies("wheel", appDir, ["personalclaw-sdk==0.1.0"], ctx);
    expect(result).toEqual({ ok: true });
    const site = readdirSync(path.join(appDir, "venv", "lib"));
    expect(site.length).toBe(1);
    const installed = path.join(appDir, "venv", "lib", site[0]!, "site-packages", "personalclaw_verify");
    expect(existsSync(path.join(installed, "__init__.py")) && existsSync(path.join(installed, "py.typed"))).toBe(true);
    expect(canariesUnder("/var/tmp", ownerHome)).toEqual([]);
  });
});

describe("npm", () => {
  it("installs a local package without running its install scripts", async () => {
    const appDir = makeApp("npm-scripts");
    const pkg = path.join(appDir, "localpkg");
    mkdirSync(pkg);
    const script = `node -e "require('fs').writeFileSync(process.env.INIT_CWD + '/pc-canary-npm', 'ran')"`;
    writeFileSync(
      path.join(pkg, "package.json"),
      JSON.stringify({
        name: "localpkg",
        version: "1.0.0",
        scripts: { preinstall: script, install: script, postinstall: script },
      }),
    );
    writeFileSync(path.join(pkg, "index.js"), "module.exports = 1;\n");
    const result = await installNpmPackages("npm-scripts", appDir, [`file:${pkg}`], ctx);
    expect(result, JSON.stringify(logged.slice(-5))).toEqual({ ok: true });
    expect(existsSync(path.join(appDir, "node_modules", "localpkg"))).toBe(true);
    expect(canariesUnder(appDir, ownerHome, "/var/tmp").filter((f) => f.endsWith("pc-canary-npm"))).toEqual([]);
  });

  it("installs exactly the packages named: the bundle's own package.json brings in nothing the review did not list", async () => {
    const appDir = makeApp("npm-own-package-json");
    const declared = path.join(appDir, "declared");
    mkdirSync(declared);
    writeFileSync(path.join(declared, "package.json"), JSON.stringify({ name: "declared", version: "1.0.0" }));
    writeFileSync(path.join(declared, "index.js"), "module.exports = 'declared';\n");
    // A package the bundle ships and its package.json depends on, which no review names.
    const hidden = path.join(appDir, "hidden-payload");
    mkdirSync(hidden);
    writeFileSync(path.join(hidden, "package.json"), JSON.stringify({ name: "hidden-payload", version: "1.0.0" }));
    writeFileSync(path.join(hidden, "index.js"), "module.exports = 'hidden';\n");
    writeFileSync(
      path.join(appDir, "package.json"),
      JSON.stringify({ name: "app", version: "1.0.0", dependencies: { "hidden-payload": "file:./hidden-payload" } }),
    );
    const result = await installNpmPackages("npm-own-package-json", appDir, [`file:${declared}`], ctx);
    expect(result, JSON.stringify(logged.slice(-5))).toEqual({ ok: true });
    expect(readFileSync(path.join(appDir, "node_modules", "declared", "index.js"), "utf8")).toContain("declared");
    expect(existsSync(path.join(appDir, "node_modules", "hidden-payload"))).toBe(false);
    // The folder npm ran in is gone.
    expect(
      readdirSync(path.join(appDir, "node_modules")).filter((name) => name.startsWith(".") && name !== ".bin"),
    ).toEqual([]);
  });

  it("merges a scope's folder and .bin: the packages the bundle ships beside the installed ones stay", async () => {
    const appDir = makeApp("npm-scope-merge");
    const shipped = path.join(appDir, "node_modules");
    mkdirSync(path.join(shipped, "@scope", "kept"), { recursive: true });
    writeFileSync(path.join(shipped, "@scope", "kept", "index.js"), "module.exports = 'kept';\n");
    mkdirSync(path.join(shipped, ".bin"));
    writeFileSync(path.join(shipped, ".bin", "kept"), "#!/bin/sh\n");
    const declared = path.join(appDir, "declared");
    mkdirSync(declared);
    writeFileSync(
      path.join(declared, "package.json"),
      JSON.stringify({ name: "@scope/declared", version: "1.0.0", bin: { declared: "cli.js" } }),
    );
    writeFileSync(path.join(declared, "cli.js"), "#!/usr/bin/env node\n");
    const result = await installNpmPackages("npm-scope-merge", appDir, [`file:${declared}`], ctx);
    expect(result, JSON.stringify(logged.slice(-5))).toEqual({ ok: true });
    expect(readdirSync(path.join(shipped, "@scope")).sort()).toEqual(["declared", "kept"]);
    expect(readFileSync(path.join(shipped, "@scope", "kept", "index.js"), "utf8")).toContain("kept");
    expect(readdirSync(path.join(shipped, ".bin")).sort()).toEqual(["declared", "kept"]);
  });

  it("cannot reach a package outside the app folder: a file: path into the owner's home fails inside the sandbox", async () => {
    const appDir = makeApp("npm-outside");
    const outside = path.join(ownerHome, "projects", "private-pkg");
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(outside, "package.json"), JSON.stringify({ name: "private-pkg", version: "1.0.0" }));
    writeFileSync(path.join(outside, "secret.txt"), "planted\n");
    const result = await installNpmPackages("npm-outside", appDir, [`file:${outside}`], ctx);
    expect(result.ok).toBe(false);
    expect(existsSync(path.join(appDir, "node_modules", "private-pkg", "secret.txt"))).toBe(false);
  });
});

describe("an installer's failed fetch", () => {
  // What npm prints when the proxy answers its CONNECT with 403: its own words, not the cause.
  const FETCHER = `
    const http = require("node:http");
    const proxy = new URL(process.env.HTTPS_PROXY);
    const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: "evil.example.net:443" });
    req.on("connect", (res) => {
      console.error("npm error code E" + res.statusCode);
      console.error("npm error 403 Forbidden - GET https://evil.example.net/pkg.tgz - blocked by a security policy");
      process.exit(1);
    });
    req.on("error", (error) => { console.error(String(error)); process.exit(1); });
    req.end();
  `;

  it("names the address the egress rules refused, before the installer's own generic words", async () => {
    const decisions: EgressDecision[] = [];
    const runtimeDir = path.join(root, "run");
    mkdirSync(runtimeDir, { recursive: true });
    const egress = new EgressBrokers(runtimeDir, (d) => decisions.push(d));
    const appDir = makeApp("npm-refused");
    const result = await installerRun(
      "npm-refused",
      appDir,
      process.execPath,
      ["-e", FETCHER],
      path.join(appDir, "node_modules"),
      grantPatterns(["registry.npmjs.org"]),
      { ...ctx, egress },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(decisions).toMatchObject([
      { host: "evil.example.net", port: 443, outcome: "refused", code: "egress_not_declared" },
    ]);
    expect(result.reason).toMatch(/^the egress rules refused evil\.example\.net:443 \(egress_not_declared[:)]/);
    // The installer's own words stay, after the cause.
    expect(result.reason).toContain("403 Forbidden");
    expect(result.reason.indexOf("egress rules refused")).toBeLessThan(result.reason.indexOf("403 Forbidden"));
  });
});
