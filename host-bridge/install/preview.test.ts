import { chmod, cp, mkdir, readFile, readdir, writeFile, symlink, rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { derivedReservedAppNames } from "../../test/helpers/route-table";
import { makeSandbox, type Sandbox } from "../../test/fixtures/hostile/sandbox";
import { canonicalListing } from "../digest/canonical-listing";
import { consentDigest } from "../digest/consent-digest";
import { previewBundle, type PreviewOptions } from "./preview";

const sandboxes: Sandbox[] = [];
// The reserved names are the route table's own, never a set of this test's (issue 33).
let reservedNames: ReadonlySet<string> = new Set();
beforeAll(async () => {
  reservedNames = await derivedReservedAppNames();
});
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.cleanup();
});

async function sandbox(fixture: string): Promise<Sandbox> {
  const sb = await makeSandbox(fixture);
  sandboxes.push(sb);
  return sb;
}

function options(sb: Sandbox, extra: Partial<PreviewOptions> = {}): PreviewOptions {
  return {
    quarantineRoot: sb.quarantine,
    reservedNames,
    core: { version: "0.3.0rc1", features: ["app-tokens"] },
    ...extra,
  };
}

/** Previews and asserts a refusal that names the path, leaves quarantine empty and writes nothing else. */
async function expectPreviewRefused(sb: Sandbox, code: string, extra: Partial<PreviewOptions> = {}) {
  const before = await sb.snapshot();
  const r = await previewBundle(sb.bundle, options(sb, extra));
  if (r.ok) throw new Error(`expected ${code}, the preview succeeded`);
  expect(r.code).toBe(code);
  expect(r.message.length).toBeGreaterThan(0);
  expect(await sb.quarantineEntries()).toEqual([]);
  expect(await sb.snapshot()).toBe(before);
  expect(await readFile(sb.sentinel, "utf8")).toBe("sentinel: must never change\n");
  return r;
}

describe("previewBundle refusals", () => {
  it("a bundle without app.json is refused as manifest_missing", async () => {
    const r = await expectPreviewRefused(await sandbox("manifest-missing"), "manifest_missing");
    expect(r.path).toBe("app.json");
  });

  it("an app.json that is not JSON is refused as manifest_invalid", async () => {
    const r = await expectPreviewRefused(await sandbox("manifest-not-json"), "manifest_invalid");
    expect(r.field).toBe("app.json");
  });

  it("an app.json that is a link to another bundle file is refused, not followed", async () => {
    const sb = await sandbox("manifest-missing");
    await writeFile(path.join(sb.bundle, "real.json"), '{"name":"linked","version":"1.0.0"}');
    await symlink("real.json", path.join(sb.bundle, "app.json"));
    const r = await expectPreviewRefused(sb, "manifest_invalid");
    expect(r.message).toContain("link");
  });

  it.each([
    ["manifest-native", "manifest_native_refused", "native"],
    ["manifest-path-escapes", "manifest_path_escapes", "backend.entryPoint"],
    ["manifest-reserved-name", "app_name_reserved", "name"],
    ["manifest-core-too-old", "core_incompatible", "minPersonalClawVersion"],
    ["manifest-not-boolean", "field_not_a_boolean", "permissions.memory"],
  ])("fixture %s is refused with %s naming field %s", async (fixture, code, field) => {
    const r = await expectPreviewRefused(await sandbox(fixture), code);
    expect(r.field).toBe(field);
    expect(r.path).toBe("app.json");
  });

  it("a core that lacks a required feature is refused naming it", async () => {
    const r = await expectPreviewRefused(await sandbox("manifest-core-too-old"), "core_incompatible", {
      core: { version: "0.3.0", features: [] },
    });
    expect(r.field).toBe("requiresCoreFeatures");
    expect(r.message).toContain("teleport");
  });

  it("the packaged native folder may declare native", async () => {
    const sb = await sandbox("manifest-native");
    const r = await previewBundle(sb.bundle, options(sb, { fromNativeFolder: true }));
    expect(r.ok).toBe(true);
  });

  it("a staging refusal comes back unchanged with the path named", async () => {
    const r = await expectPreviewRefused(await sandbox("link-escapes"), "bundle_link_escapes");
    expect(r.path).toBe("stolen");
  });

  it.each([
    "scan-destructive-runtime",
    "scan-credentials",
    "scan-download-exec",
    "scan-pip-overrides",
    "scan-embedded-git",
    "scan-manifest-python-source",
  ])("a dangerous verdict (%s) is a terminal scan_dangerous refusal carrying the findings", async (fixture) => {
    const r = await expectPreviewRefused(await sandbox(fixture), "scan_dangerous");
    const detail = r.detail as { verdict: string; findings: Array<{ runs: boolean; severity: string; path: string }> };
    expect(detail.verdict).toBe("dangerous");
    expect(detail.findings.some((f) => f.runs && f.severity === "dangerous" && f.path === r.path)).toBe(true);
  });
});

describe("previewBundle keeps no copy unless install asks for one", () => {
  it("a preview writes nothing: a quarantine root it could not even create is never touched", async () => {
    const sb = await sandbox("scan-clean-ok");
    const before = await sb.snapshot();
    // The sentinel is a file: any mkdir of or under it would fail the preview.
    const r = await previewBundle(sb.bundle, options(sb, { quarantineRoot: path.join(sb.sentinel, "q") }));
    if (!r.ok) throw new Error(r.code);
    expect(r.review.verdict).toBe("clean");
    expect(await sb.snapshot()).toBe(before);
    expect(await sb.quarantineEntries()).toEqual([]);
    expect(await readFile(sb.sentinel, "utf8")).toBe("sentinel: must never change\n");
  });

  it.each(
    [
      "scan-clean-ok",
      "scan-credentials",
      "scan-destructive-test-only",
      "scan-embedded-git",
      "scan-node-modules-import",
      "scan-planted-config",
      "scan-test-helper-imported",
      "link-inside-ok",
      "manifest-not-json",
      "manifest-duplicate-key",
      "manifest-missing",
      "scan-destructive-runtime",
      "link-escapes",
    ].map((fixture) => [fixture]),
  )("%s: the preview and the install's staged copy answer the same review, digest or refusal", async (fixture) => {
    const sb = await sandbox(fixture);
    const preview = await previewBundle(sb.bundle, options(sb));
    const staged = await previewBundle(sb.bundle, options(sb, { keepStaged: true }));
    if (staged.ok) {
      await rm(staged.stagedDir!, { recursive: true });
      const { stagedDir: _dir, stagedId: _id, ...kept } = staged;
      expect(preview).toEqual(kept);
    } else expect(preview).toEqual(staged);
  });

  it("files too large to show and too large to scan read the same with and without a copy", async () => {
    const sb = await sandbox("scan-clean-ok");
    // Over the 1 MiB a staged copy shows (read back by the scan), and over the scan's own limit.
    await mkdir(path.join(sb.bundle, "tests"), { recursive: true });
    const big = `x = "${"a".repeat(3 * 1024 * 1024)}"\nimport os; os.system("rm -rf /")\n`;
    await writeFile(path.join(sb.bundle, "tests", "test_model.py"), big);
    await writeFile(path.join(sb.bundle, "huge.bin"), Buffer.alloc(6 * 1024 * 1024, 3));
    const scan = { maxFileBytes: 4 * 1024 * 1024 };
    const preview = await previewBundle(sb.bundle, options(sb, { scan }));
    const staged = await previewBundle(sb.bundle, options(sb, { scan, keepStaged: true }));
    if (!preview.ok || !staged.ok) throw new Error("expected both previews to succeed");
    await rm(staged.stagedDir!, { recursive: true });
    expect(preview.digest).toBe(staged.digest);
    expect(preview.review).toEqual(staged.review);
    const findings = [...preview.review.findings.runtime, ...preview.review.findings.tests];
    expect(findings.find((f) => f.path === "huge.bin")).toMatchObject({ rule: "unscanned_file" });
    expect(findings.some((f) => f.path === "tests/test_model.py" && f.rule !== "unscanned_file")).toBe(true);
  });
});

describe("previewBundle review and digest", () => {
  it("a clean app previews with a review and a digest, and the quarantine copy is removed", async () => {
    const sb = await sandbox("scan-clean-ok");
    const r = await previewBundle(sb.bundle, options(sb));
    if (!r.ok) throw new Error(r.code);
    expect(r.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(r.review.verdict).toBe("clean");
    expect(r.review.backend).toMatchObject({ command: "python3", args: ["server.py"], healthCheck: "/health" });
    expect(r.stagedDir).toBeUndefined();
    expect(await sb.quarantineEntries()).toEqual([]);
  });

  it("a warning verdict previews, with test findings grouped apart from runtime ones", async () => {
    const sb = await sandbox("scan-destructive-test-only");
    const r = await previewBundle(sb.bundle, options(sb));
    if (!r.ok) throw new Error(r.code);
    expect(r.review.verdict).toBe("warning");
    expect(r.review.findings.runtime).toEqual([]);
    expect(r.review.findings.tests.map((f) => f.path).sort()).toEqual(["docs/INSTALL.md", "tests/test_cleanup.py"]);
  });

  it("keepStaged keeps the quarantine copy, and its installed listing equals the consented one", async () => {
    const sb = await sandbox("scan-clean-ok");
    const r = await previewBundle(sb.bundle, options(sb, { keepStaged: true }));
    if (!r.ok) throw new Error(r.code);
    expect(r.stagedDir).toBeDefined();
    expect(await readdir(sb.quarantine)).toEqual([r.stagedId]);
    // Simulate the install's rename into place, then re-hash what is installed.
    const installed = path.join(sb.root, "apps", "clean-ok");
    await mkdir(path.dirname(installed), { recursive: true });
    await cp(r.stagedDir!, installed, { recursive: true, verbatimSymlinks: true });
    await rm(r.stagedDir!, { recursive: true });
    const rehashed = await canonicalListing(installed);
    if (!rehashed.ok) throw new Error(rehashed.code);
    expect(consentDigest(rehashed.listing, r.review as unknown as Record<string, unknown>)).toBe(r.digest);
  });

  it("the review leads with prerequisites and shows the network grant as enforced", async () => {
    const sb = await sandbox("scan-clean-ok");
    const manifest = JSON.parse(await readFile(path.join(sb.bundle, "app.json"), "utf8"));
    Object.assign(manifest, {
      requires: [{ name: "ComfyUI", why: "renders images", how: "install ComfyUI" }],
      permissions: { network: ["api.example.com"], cron: true, agent: "text" },
      crons: [{ name: "daily", schedule: "0 9 * * *" }],
      dependencies: { pythonDependencies: ["requests==2.31.0"], npmPackages: ["some-adapter"] },
      setup: { onInstall: { command: "python3", args: ["handlers.py"] }, onUpdate: { command: "true" } },
      mcpServers: { search: { command: "python3", args: ["handlers.py"], env: { TOKEN_FILE: "x" } } },
      launches: [{ program: "git", why: "clones repositories", hosts: ["github.com"] }],
      writes: [{ path: "~/.cache/clean-ok", why: "thumbnails" }],
      storeCopy: { highlights: ["x"] },
    });
    await writeFile(path.join(sb.bundle, "app.json"), JSON.stringify(manifest));
    const r = await previewBundle(sb.bundle, options(sb));
    if (!r.ok) throw new Error(r.code);
    expect(Object.keys(r.review)[1]).toBe("prerequisites");
    expect(r.review.prerequisites).toEqual([{ name: "ComfyUI", why: "renders images", how: "install ComfyUI" }]);
    expect(r.review.permissions.network).toMatchObject({ hosts: ["api.example.com"], enforced: true });
    expect(r.review.scheduledJobs).toEqual([
      {
        name: "daily",
        schedule: "0 9 * * *",
        timezone: "UTC",
        route: null,
        timeoutSeconds: 60,
        enabled: true,
        registers: true,
      },
    ]);
    expect(r.review.pythonPackages).toEqual(["requests==2.31.0"]);
    expect(r.review.npmPackages.packages).toEqual(["some-adapter"]);
    expect(r.review.npmPackages.note).toContain("install scripts");
    expect(r.review.installHook).toEqual({ command: "python3", args: ["handlers.py"], timeoutSeconds: 60 });
    expect(r.review.updateHook).toEqual({ declared: true, runs: false });
    expect(r.review.mcpServers).toEqual([
      {
        name: "search",
        transport: "stdio",
        command: "python3",
        args: ["handlers.py"],
        envNames: ["TOKEN_FILE"],
        // The values too: the owner sees what each variable is set to, and the digest covers it.
        env: { TOKEN_FILE: "x" },
        url: null,
      },
    ]);
    expect(r.review.launches[0]).toMatchObject({ program: "git", hosts: ["github.com"] });
    expect(r.review.writes).toEqual([{ path: "~/.cache/clean-ok", why: "thumbnails" }]);
    expect(r.review.unrecognisedManifestKeys).toEqual(["storeCopy"]);
  });
});

describe("previewBundle digest", () => {
  it("an identical tree in another location gives the same digest; one changed byte gives another", async () => {
    const a = await sandbox("scan-clean-ok");
    const b = await sandbox("scan-clean-ok");
    const ra = await previewBundle(a.bundle, options(a));
    const rb = await previewBundle(b.bundle, options(b));
    if (!ra.ok || !rb.ok) throw new Error("preview failed");
    expect(rb.digest).toBe(ra.digest);

    const handlers = path.join(b.bundle, "handlers.py");
    const bytes = await readFile(handlers);
    bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 1;
    await writeFile(handlers, bytes);
    const changed = await previewBundle(b.bundle, options(b));
    if (!changed.ok) throw new Error(changed.code);
    expect(changed.digest).not.toBe(ra.digest);
  });

  it("omitted tooling folders are not in the listing and do not change the digest", async () => {
    const a = await sandbox("scan-clean-ok");
    const b = await sandbox("scan-clean-ok");
    for (const dir of [".git/objects", "ui/__pycache__", "Venv/bin"]) {
      await mkdir(path.join(b.bundle, dir), { recursive: true });
      await writeFile(path.join(b.bundle, dir, "payload"), "rm -rf /\n");
    }
    const ra = await previewBundle(a.bundle, options(a));
    const rb = await previewBundle(b.bundle, options(b));
    if (!ra.ok || !rb.ok) throw new Error("preview failed");
    expect(rb.listing.some((e) => /(^|\/)(\.git|__pycache__|venv)(\/|$)/i.test(e.path))).toBe(false);
    expect(rb.digest).toBe(ra.digest);
    expect(rb.review.verdict).toBe("clean");
  });

  it("for 2 000 files staged several at a time, the digest equals one recomputed by reading the staged folder", async () => {
    const sb = await sandbox("scan-clean-ok");
    let seed = 0x2545f491;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    for (let i = 0; i < 2000; i++) {
      const folder = path.join(sb.bundle, "assets", `d${i % 20}`);
      if (i < 20) await mkdir(folder, { recursive: true });
      const size = (next() % 6000) + (i % 7 === 0 ? 0 : 1);
      const bytes =
        i % 2 === 0
          ? Buffer.from(`// asset ${i}\n`.repeat(Math.ceil(size / 14)).slice(0, size))
          : Buffer.from(Array.from({ length: size }, () => next() & 0xff));
      const file = path.join(folder, `f${i}.${i % 2 === 0 ? "txt" : "bin"}`);
      await writeFile(file, bytes);
      if (i % 97 === 0) await chmod(file, 0o755);
    }
    await symlink("d1/f1.bin", path.join(sb.bundle, "assets", "alias.bin"));
    const r = await previewBundle(sb.bundle, options(sb, { keepStaged: true }));
    if (!r.ok) throw new Error(r.code);
    const recomputed = await canonicalListing(r.stagedDir!);
    if (!recomputed.ok) throw new Error(recomputed.code);
    expect(r.listing).toEqual(recomputed.listing);
    expect(r.listing.filter((e) => e.type === "file")).toHaveLength(2000 + 6);
    expect(consentDigest(recomputed.listing, r.review as unknown as Record<string, unknown>)).toBe(r.digest);
    const again = await previewBundle(sb.bundle, options(sb));
    if (!again.ok) throw new Error(again.code);
    expect(again.digest).toBe(r.digest);
  });

  it("a previewed link is listed as a link with its target", async () => {
    const sb = await sandbox("scan-clean-ok");
    await symlink("handlers.py", path.join(sb.bundle, "alias.py"));
    const r = await previewBundle(sb.bundle, options(sb));
    if (!r.ok) throw new Error(r.code);
    expect(r.listing).toContainEqual({ path: "alias.py", type: "link", target: "handlers.py" });
  });
});
