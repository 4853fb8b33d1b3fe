import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeSandbox, type Sandbox } from "../../test/fixtures/hostile/sandbox";
import { validateManifest, type AppManifest } from "../../kernel/contracts/manifest";
import { stageBundle } from "../staging/stage-bundle";
import { SCAN_RULES } from "./rules";
import { scanStaged, type ScanOptions } from "./scan-staged";

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.cleanup();
});

async function scanBundle(fixture: string, prepare?: (bundle: string) => Promise<void>, opts?: ScanOptions) {
  const sb = await makeSandbox(fixture);
  sandboxes.push(sb);
  await prepare?.(sb.bundle);
  const staged = await stageBundle(sb.bundle, sb.quarantine);
  if (!staged.ok) throw new Error(`staging failed: ${staged.code} ${staged.path}`);
  const raw = JSON.parse(await readFile(path.join(staged.dir, "app.json"), "utf8"));
  const v = validateManifest(raw, {
    reservedNames: new Set(),
    fromNativeFolder: false,
    core: { version: "1.0.0", features: [] },
  });
  if (!v.ok) throw new Error(`manifest refused: ${v.code}`);
  return scanStaged(staged.dir, staged.entries, v.manifest as AppManifest, opts);
}

describe("scanStaged verdicts", () => {
  it("a clean app scans clean", async () => {
    const r = await scanBundle("scan-clean-ok");
    expect(r.findings).toEqual([]);
    expect(r.verdict).toBe("clean");
  });

  it("a destructive command in a module the backend imports is dangerous and runs", async () => {
    const r = await scanBundle("scan-destructive-runtime");
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toContainEqual(
      expect.objectContaining({
        rule: "destructive-rm-root",
        path: "lib/tools.py",
        line: 4,
        runs: true,
        severity: "dangerous",
      }),
    );
  });

  it("the same destructive string in a test file nothing loads is only a warning", async () => {
    const r = await scanBundle("scan-destructive-test-only");
    expect(r.verdict).toBe("warning");
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "destructive-rm-root", path: "tests/test_cleanup.py", runs: false }),
    );
    // A curl | sh line in a document is shown, but a document is not code the app runs.
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "download-pipe-shell", path: "docs/INSTALL.md", runs: false }),
    );
  });

  it("a file under tests/ that runtime code imports counts as running", async () => {
    const r = await scanBundle("scan-test-helper-imported");
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "destructive-dd-device", path: "tests/fixtures.py", runs: true }),
    );
  });

  it("a credential read in an imported ES module is dangerous", async () => {
    const r = await scanBundle("scan-credentials");
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "credential-ssh", path: "lib/keys.js", line: 4, runs: true }),
    );
  });

  it("download-and-execute in the install hook's script is dangerous", async () => {
    const r = await scanBundle("scan-download-exec");
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "download-pipe-shell", path: "install.sh", line: 3, runs: true }),
    );
  });

  it("a credential read in a node_modules package the entry imports is dangerous and runs", async () => {
    const r = await scanBundle("scan-node-modules-import", async (bundle) => {
      const pkg = path.join(bundle, "node_modules", "tiny-helper");
      await mkdir(path.join(pkg, "lib"), { recursive: true });
      await writeFile(path.join(pkg, "package.json"), JSON.stringify({ name: "tiny-helper", main: "lib/main.js" }));
      await writeFile(
        path.join(pkg, "lib", "main.js"),
        "const { execSync } = require('child_process');\nmodule.exports = () => execSync('cat ~/.aws/credentials');\n",
      );
      await mkdir(path.join(pkg, "test"), { recursive: true });
      await writeFile(path.join(pkg, "test", "wipe.test.js"), "expect(run('rm -rf /')).toThrow();\n");
    });
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "credential-aws", path: "node_modules/tiny-helper/lib/main.js", runs: true }),
    );
    expect(r.findings).toContainEqual(
      expect.objectContaining({
        rule: "destructive-rm-root",
        path: "node_modules/tiny-helper/test/wipe.test.js",
        runs: false,
      }),
    );
  });

  it("npm lifecycle scripts in any package.json at any depth are warnings", async () => {
    const r = await scanBundle("scan-npm-lifecycle", async (bundle) => {
      await mkdir(path.join(bundle, "node_modules", "dep"), { recursive: true });
      await writeFile(
        path.join(bundle, "node_modules", "dep", "package.json"),
        '{\n  "name": "dep",\n  "scripts": { "preinstall": "node pre.js" }\n}\n',
      );
    });
    expect(r.verdict).toBe("warning");
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "npm-lifecycle-script", path: "package.json", line: 6 }),
    );
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "npm-lifecycle-script", path: "node_modules/dep/package.json", line: 3 }),
    );
    expect(r.findings.filter((f) => f.rule === "npm-lifecycle-script")).toHaveLength(2);
  });

  it("index overrides and non-registry sources in a requirements file the hook installs are dangerous", async () => {
    const r = await scanBundle("scan-pip-overrides");
    expect(r.verdict).toBe("dangerous");
    const lines = r.findings.filter((f) => f.path === "requirements.txt").map((f) => [f.rule, f.line, f.runs]);
    expect(lines).toContainEqual(["pip-index-override", 3, true]);
    expect(lines).toContainEqual(["pip-non-registry-source", 3, true]);
    expect(lines).toContainEqual(["pip-non-registry-source", 4, true]);
    expect(lines).toContainEqual(["pip-non-registry-source", 5, true]);
    // The comment on line 1 names a URL but is not an instruction.
    expect(lines.some(([, line]) => line === 1 || line === 2)).toBe(false);
  });

  it.each([
    "-i https://x.example/simple",
    "--find-links=/tmp/wheels",
    "-e ./local",
    "pkg @ file:///tmp/pkg.whl",
    "./pkg.whl",
  ])("a requirements line %s is flagged", async (line) => {
    const r = await scanBundle("scan-clean-ok", (bundle) =>
      writeFile(path.join(bundle, "requirements-dev.txt"), `${line}\n`),
    );
    expect(r.findings.map((f) => f.path)).toContain("requirements-dev.txt");
  });

  it("a non-registry pythonDependencies entry in app.json is dangerous", async () => {
    const r = await scanBundle("scan-manifest-python-source");
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toEqual([
      expect.objectContaining({ rule: "manifest-python-source", path: "app.json", runs: true }),
    ]);
  });

  it("planted package-manager config files are warnings, wherever they sit", async () => {
    const r = await scanBundle("scan-planted-config", async (bundle) => {
      for (const name of ["pip.ini", ".yarnrc", ".yarnrc.yml", ".pypirc"])
        await writeFile(path.join(bundle, "config", name), "x\n");
    });
    expect(r.verdict).toBe("warning");
    const planted = r.findings
      .filter((f) => f.rule === "planted-package-config")
      .map((f) => f.path)
      .sort();
    expect(planted).toEqual([
      ".npmrc",
      "config/.pypirc",
      "config/.yarnrc",
      "config/.yarnrc.yml",
      "config/pip.conf",
      "config/pip.ini",
    ]);
  });

  it("an embedded git repository under another name is dangerous", async () => {
    const r = await scanBundle("scan-embedded-git");
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toContainEqual(
      expect.objectContaining({ rule: "embedded-git-repository", path: "vendor/tool", runs: true }),
    );
  });

  it("a file larger than the scan limit is an unscanned_file finding, never a silent pass", async () => {
    const r = await scanBundle(
      "scan-clean-ok",
      (bundle) => writeFile(path.join(bundle, "blob.bin"), Buffer.alloc(4096, 1)),
      { maxFileBytes: 1024 },
    );
    expect(r.verdict).toBe("warning");
    expect(r.findings).toContainEqual(expect.objectContaining({ rule: "unscanned_file", path: "blob.bin" }));
  });

  it("a code file nothing reaches but which is not a test is presumed to run", async () => {
    const r = await scanBundle("scan-clean-ok", (bundle) => writeFile(path.join(bundle, "scripts.sh"), "rm -rf ~/\n"));
    expect(r.verdict).toBe("dangerous");
    expect(r.findings).toContainEqual(expect.objectContaining({ path: "scripts.sh", runs: true }));
  });
});

describe("the documented rule set", () => {
  it("every rule is documented in docs/app-scanner.md with its id", async () => {
    const doc = await readFile(path.join(import.meta.dirname, "../../docs/app-scanner.md"), "utf8");
    for (const rule of SCAN_RULES) expect(doc).toContain(`\`${rule.id}\``);
  });
});
