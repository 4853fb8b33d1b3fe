import { beforeAll, describe, expect, it } from "vitest";
import { isEscapingResourcePath, validateManifest, type ValidateManifestOptions } from "./manifest";
import { backendStartTimeoutMs } from "./manifest-backend-ui";
import { compareVersions } from "./manifest-versions";
import { derivedReservedAppNames } from "../../test/helpers/route-table";

// The reserved names are the route table's own, never a set of this test's (issue 33).
const opts: ValidateManifestOptions = {
  reservedNames: new Set<string>(),
  fromNativeFolder: false,
  core: { version: "0.3.0", features: ["app-tokens", "mcp-bridge"] },
};
beforeAll(async () => {
  opts.reservedNames = await derivedReservedAppNames();
});

const base = { name: "hello-app", version: "1.0.0" };

function refusedWith(raw: unknown, o: ValidateManifestOptions = opts) {
  const r = validateManifest(raw, o);
  if (r.ok) throw new Error("expected a refusal");
  return r;
}

describe("validateManifest", () => {
  it("accepts a full manifest and keeps unknown top-level keys", () => {
    const raw = {
      ...base,
      displayName: "Hello",
      description: "says hello",
      backend: { command: "python3", args: ["server.py"], entryPoint: "server.py", healthCheck: "/health" },
      ui: { entry: "ui/index.html", pages: [{ entryPoint: "ui/a..b.html", title: "A" }] },
      permissions: { api: ["/api/status"], memory: false, cron: true, agent: "text", network: ["example.com"] },
      crons: [{ name: "daily", schedule: "0 9 * * *", silent: true }],
      mcpServers: { search: { command: "node", args: ["mcp.js"], env: { MODE: "x" } } },
      dependencies: { pythonDependencies: ["requests==2.31.0"], npmPackages: ["left-pad"] },
      setup: { onInstall: { command: "python3", args: ["setup.py"] }, onUpdate: { command: "true" } },
      launches: [{ program: "npx", why: "runs a tool", npmPackage: "@scope/tool", inherits: ["settings"] }],
      writes: [{ path: "~/.config/hello", why: "its cache" }],
      requires: [{ name: "ComfyUI", why: "renders images", how: "install ComfyUI" }],
      minPersonalClawVersion: "0.3.0",
      requiresCoreFeatures: ["mcp-bridge"],
      quality: { tested: true },
      futureField: { anything: 1 },
    };
    const r = validateManifest(raw, opts);
    expect(r.ok).toBe(true);
    if (r.ok) expect((r.manifest as Record<string, unknown>).futureField).toEqual({ anything: 1 });
  });

  it("refuses a name that is not kebab-case, naming the field", () => {
    for (const name of ["Hello", "hello_app", "-x", "a--b", "", "x".repeat(65)]) {
      const r = refusedWith({ ...base, name });
      expect(r.code).toBe("manifest_invalid");
      expect(r.field).toBe("name");
    }
  });

  it("refuses every name the route table reserves, the platform's registry, blob, install and register among them", () => {
    for (const name of ["registry", "registries", "blob", "install", "register", "preview", "message", "native"]) {
      expect(opts.reservedNames.has(name), name).toBe(true);
      expect(refusedWith({ ...base, name })).toMatchObject({ code: "app_name_reserved", field: "name" });
    }
  });

  it.each([
    ["native", { native: "true" }],
    ["permissions.memory", { permissions: { memory: 1 } }],
    ["permissions.cron", { permissions: { cron: null } }],
    ["permissions.storage", { permissions: { storage: ["yes"] } }],
    ["permissions.approvals", { permissions: { approvals: "true" } }],
    [
      "crons[0].silent",
      { permissions: { agent: "text" }, crons: [{ name: "a", schedule: "* * * * *", silent: "false" }] },
    ],
    ["quality.tested", { quality: { tested: "yes" } }],
    [
      "launches[0].inheritsWhile.value",
      { launches: [{ program: "x", why: "y", inheritsWhile: { setting: "s", value: 0 } }] },
    ],
  ])("refuses a non-boolean %s as field_not_a_boolean", (field, extra) => {
    const r = refusedWith({ ...base, ...extra });
    expect(r).toMatchObject({ code: "field_not_a_boolean", field });
  });

  it.each([
    ["permissions.api", { permissions: { api: "*" } }],
    ["permissions.events", { permissions: { events: "app.*" } }],
    ["permissions.mcpTools", { permissions: { mcpTools: "all" } }],
    ["permissions.network", { permissions: { network: "example.com" } }],
    ["dependencies.pythonDependencies", { dependencies: { pythonDependencies: "requests" } }],
    ["requiresCoreFeatures", { requiresCoreFeatures: "x" }],
  ])("refuses a scalar where %s must be a list", (field, extra) => {
    const r = refusedWith({ ...base, ...extra });
    expect(r).toMatchObject({ code: "manifest_invalid", field });
  });

  it("refuses agent: true (the tier is a word, not a boolean)", () => {
    expect(refusedWith({ ...base, permissions: { agent: true } })).toMatchObject({
      code: "manifest_invalid",
      field: "permissions.agent",
    });
  });

  it("refuses crons without an agent tier", () => {
    expect(refusedWith({ ...base, crons: [{ name: "a", schedule: "* * * * *" }] })).toMatchObject({
      code: "manifest_invalid",
      field: "crons",
    });
  });

  it("accepts a routed job with permissions.cron and a backend, and refuses one without either or with a bad schedule", () => {
    const backend = { command: "node", args: ["server.mjs"] };
    const job = { name: "tick", schedule: "0 3 * * *", route: "/jobs/tick", timeoutSeconds: 10 };
    expect(validateManifest({ ...base, backend, permissions: { cron: true }, crons: [job] }, opts).ok).toBe(true);
    expect(
      validateManifest(
        { ...base, backend, permissions: { cron: true }, crons: [{ ...job, timezone: "Europe/Paris" }] },
        opts,
      ).ok,
    ).toBe(true);
    expect(refusedWith({ ...base, backend, crons: [job] })).toMatchObject({
      code: "manifest_invalid",
      field: "crons[0]",
    });
    expect(refusedWith({ ...base, backend, permissions: { cron: "true" }, crons: [job] })).toMatchObject({
      code: "field_not_a_boolean",
      field: "permissions.cron",
    });
    expect(refusedWith({ ...base, permissions: { cron: true }, crons: [job] })).toMatchObject({
      field: "crons[0].route",
    });
    expect(
      refusedWith({ ...base, backend, permissions: { cron: true }, crons: [{ ...job, schedule: "61 * * * *" }] }),
    ).toMatchObject({ field: "crons[0].schedule" });
    expect(
      refusedWith({ ...base, backend, permissions: { cron: true }, crons: [{ ...job, timezone: "Nowhere/City" }] }),
    ).toMatchObject({ field: "crons[0].schedule" });
    expect(
      refusedWith({ ...base, backend, permissions: { cron: true }, crons: [{ ...job, route: "jobs" }] }).field,
    ).toBe("crons[0].route");
    expect(refusedWith({ ...base, backend, permissions: { cron: true }, crons: [job, job] })).toMatchObject({
      field: "crons",
    });
  });

  it("refuses a stdio server without a command and an http server without an https URL", () => {
    expect(refusedWith({ ...base, mcpServers: { s: { args: ["x"] } } }).field).toBe("mcpServers.s.command");
    expect(
      refusedWith({ ...base, mcpServers: { s: { transport: "http", url: "http://example.com/mcp" } } }).field,
    ).toBe("mcpServers.s.url");
    expect(
      refusedWith({ ...base, mcpServers: { s: { transport: "http", url: "https://example.com/mcp", command: "x" } } })
        .field,
    ).toBe("mcpServers.s.command");
    expect(
      validateManifest({ ...base, mcpServers: { s: { transport: "http", url: "https://example.com/mcp" } } }, opts).ok,
    ).toBe(true);
  });

  it("refuses a relative or querying health check path", () => {
    for (const healthCheck of ["health", "/health?x=1", "/h%2e"]) {
      expect(refusedWith({ ...base, backend: { command: "node", healthCheck } }).field).toBe("backend.healthCheck");
    }
  });

  it("takes a backend start timeout of 1 to 600 whole seconds, 30 when it says none", () => {
    for (const startTimeoutSeconds of [0, 601, 2.5, "30"])
      expect(refusedWith({ ...base, backend: { command: "node", startTimeoutSeconds } }).field).toBe(
        "backend.startTimeoutSeconds",
      );
    for (const startTimeoutSeconds of [1, 600]) {
      const read = validateManifest({ ...base, backend: { command: "node", startTimeoutSeconds } }, opts);
      expect(read.ok && backendStartTimeoutMs(read.manifest.backend)).toBe(startTimeoutSeconds * 1000);
    }
    const unsaid = validateManifest({ ...base, backend: { command: "node" } }, opts);
    expect(unsaid.ok && backendStartTimeoutMs(unsaid.manifest.backend)).toBe(30_000);
  });

  it("refuses a setup hook written as a shell string", () => {
    expect(refusedWith({ ...base, setup: { onInstall: "sh -c 'x'" } })).toMatchObject({
      code: "manifest_invalid",
      field: "setup.onInstall",
    });
  });

  it("refuses an mcp server name with ':' or '/'", () => {
    expect(refusedWith({ ...base, mcpServers: { "a:b": { command: "x" } } }).code).toBe("manifest_invalid");
    expect(refusedWith({ ...base, mcpServers: { "a/b": { command: "x" } } }).code).toBe("manifest_invalid");
  });

  it("refuses an npx launch without a bare package name", () => {
    expect(refusedWith({ ...base, launches: [{ program: "npx", why: "x" }] }).field).toBe("launches[0].npmPackage");
    expect(refusedWith({ ...base, launches: [{ program: "npx", why: "x", npmPackage: "tool@1.2.3" }] }).field).toBe(
      "launches[0].npmPackage",
    );
  });

  it.each([
    ["backend.entryPoint", { backend: { command: "python3", entryPoint: "/etc/passwd" } }],
    ["backend.entryPoint", { backend: { command: "python3", entryPoint: "D:evil.py" } }],
    ["backend.entryPoint", { backend: { command: "python3", entryPoint: "..\\evil.py" } }],
    ["ui.entry", { ui: { entry: "\\\\server\\share\\x.html" } }],
    ["ui.entry", { ui: { entry: "ui/../../x.html" } }],
    ["ui.pages[1].entryPoint", { ui: { pages: [{ entryPoint: "ok.html" }, { entryPoint: "a/../../b.html" }] } }],
    ["icon", { icon: "C:\\icon.png" }],
  ])("refuses an escaping resource path in %s", (field, extra) => {
    expect(refusedWith({ ...base, ...extra })).toMatchObject({ code: "manifest_path_escapes", field });
  });

  it("keeps names like a..b valid", () => {
    expect(isEscapingResourcePath("a..b/c..d.py")).toBe(false);
    expect(validateManifest({ ...base, backend: { command: "python3", entryPoint: "src/a..b.py" } }, opts).ok).toBe(
      true,
    );
  });

  it("accepts folder needs and refuses a need name that is not a path segment or that collides with another", () => {
    const folders = [
      { name: "documents", why: "indexes your notes", access: "read" },
      { name: "out_put", why: "writes reports", access: "read-write" },
    ];
    const ok = validateManifest({ ...base, permissions: { folders } }, opts);
    expect(ok.ok && ok.manifest.permissions?.folders).toEqual(folders);
    expect(
      refusedWith({ ...base, permissions: { folders: [{ name: "../up", why: "x", access: "read" }] } }),
    ).toMatchObject({ code: "manifest_invalid", field: "permissions.folders[0].name" });
    expect(
      refusedWith({ ...base, permissions: { folders: [{ name: "docs", why: "x", access: "write" }] } }).field,
    ).toBe("permissions.folders[0].access");
    expect(
      refusedWith({
        ...base,
        permissions: {
          folders: [
            { name: "my-docs", why: "x", access: "read" },
            { name: "my_docs", why: "y", access: "read" },
          ],
        },
      }),
    ).toMatchObject({ code: "manifest_invalid", field: "permissions.folders" });
  });

  it("refuses native: true from anywhere but the native folder, naming the field", () => {
    expect(refusedWith({ ...base, native: true })).toMatchObject({ code: "manifest_native_refused", field: "native" });
    expect(validateManifest({ ...base, native: true }, { ...opts, fromNativeFolder: true }).ok).toBe(true);
  });
});

describe("core compatibility (MAN-02)", () => {
  it("refuses a floor above this core, naming both versions", () => {
    const r = refusedWith({ ...base, minPersonalClawVersion: "0.4.0" });
    expect(r).toMatchObject({ code: "core_incompatible", field: "minPersonalClawVersion" });
    expect(r.message).toContain("0.4.0");
    expect(r.message).toContain("0.3.0");
    expect(r.message).toContain("Update PersonalClaw");
  });

  it("refuses an app that needs 0.3.0 on a 0.3.0rc1 or 0.3.0-rc.1 core", () => {
    for (const version of ["0.3.0rc1", "0.3.0-rc.1", "0.3.0.dev4", "0.3.0a2"]) {
      expect(
        refusedWith({ ...base, minPersonalClawVersion: "0.3.0" }, { ...opts, core: { version, features: [] } }).code,
      ).toBe("core_incompatible");
    }
  });

  it("accepts a pre-release floor on the release core", () => {
    expect(validateManifest({ ...base, minPersonalClawVersion: "0.3.0rc1" }, opts).ok).toBe(true);
    expect(validateManifest({ ...base, minPersonalClawVersion: "0.2.9" }, opts).ok).toBe(true);
  });

  it("refuses an unparsable floor or core version, naming both", () => {
    const bad = refusedWith({ ...base, minPersonalClawVersion: "latest" });
    expect(bad.code).toBe("core_incompatible");
    expect(bad.message).toContain("latest");
    expect(bad.message).toContain("0.3.0");
    const badCore = refusedWith(
      { ...base, minPersonalClawVersion: "0.1.0" },
      { ...opts, core: { version: "dev-build", features: [] } },
    );
    expect(badCore.message).toContain("dev-build");
    expect(badCore.message).toContain("0.1.0");
  });

  it("refuses missing core features, naming each", () => {
    const r = refusedWith({ ...base, requiresCoreFeatures: ["mcp-bridge", "time-travel", "teleport"] });
    expect(r).toMatchObject({ code: "core_incompatible", field: "requiresCoreFeatures" });
    expect(r.message).toContain("time-travel");
    expect(r.message).toContain("teleport");
    expect(r.message).not.toContain("mcp-bridge");
  });

  it("orders versions as the packaging standard does", () => {
    const ordered = ["0.3.0.dev1", "0.3.0a1", "0.3.0b2", "0.3.0rc1", "0.3.0", "0.3.0.post1", "0.3.1", "1.0"];
    for (let i = 0; i + 1 < ordered.length; i++) expect(compareVersions(ordered[i]!, ordered[i + 1]!)).toBeLessThan(0);
    expect(compareVersions("1.0", "1.0.0")).toBe(0);
    expect(compareVersions("0.3.0-rc.1", "0.3.0rc1")).toBe(0);
    expect(compareVersions("0.3.0-beta.1", "0.3.0-rc.1")).toBeLessThan(0);
  });
});

describe("the UI folder rule", () => {
  it.each([
    ["the bundle root", { ui: { entry: "index.html" } }],
    ["data/", { ui: { entry: "data/index.html" } }],
    ["a folder inside data/", { ui: { entry: "data/ui/index.html" } }],
    ["venv/", { ui: { entry: "venv/index.html" } }],
    ["node_modules/ anywhere", { ui: { entry: "ui/node_modules/x/index.html" } }],
    ["wheels/", { ui: { entry: "Wheels/index.html" } }],
    ["a ./ segment", { ui: { entry: "./index.html" } }],
    ["a dot folder", { ui: { entry: ".ui/index.html" } }],
    [
      "the backend's entry point's folder",
      {
        ui: { entry: "src/index.html" },
        backend: { command: "node", args: ["src/server.js"], entryPoint: "src/server.js" },
      },
    ],
    [
      "the folder of a file the backend runs",
      { ui: { entry: "src/index.html" }, backend: { command: "node", args: ["src/server.js"] } },
    ],
  ])("refuses a UI entry at %s, naming ui.entry", (_where, extra) => {
    const r = refusedWith({ ...base, ...extra });
    expect(r).toMatchObject({ code: "manifest_ui_folder_invalid", field: "ui.entry" });
  });

  it("refuses a page outside the UI folder, naming the page", () => {
    const r = refusedWith({
      ...base,
      ui: { entry: "ui/index.html", pages: [{ entryPoint: "ui/a.html" }, { entryPoint: "server.js" }] },
    });
    expect(r).toMatchObject({ code: "manifest_ui_folder_invalid", field: "ui.pages[1].entryPoint" });
  });

  it.each([["ui/index.html"], ["web/dist/index.html"], ["public/app.html"]])(
    "accepts %s beside a backend elsewhere",
    (entry) => {
      const r = validateManifest(
        { ...base, ui: { entry }, backend: { command: "node", args: ["server.mjs"], entryPoint: "server.mjs" } },
        opts,
      );
      expect(r.ok).toBe(true);
    },
  );
});

describe("the npm screen", () => {
  it.each([
    ["left-pad"],
    ["left-pad@1.3.0"],
    ["left-pad@^1.2"],
    ["@scope/name@~1.0.0"],
    ["@scope/name"],
    ["pkg@>=1.0.0 <2.0.0"],
    ["pkg@1.x || 2.x"],
    ["pkg@1.0.0 - 1.5.0"],
    ["pkg@1.0.0-beta.1"],
    ["pkg@*"],
  ])("accepts the registry form %s", (spec) => {
    const r = validateManifest({ ...base, dependencies: { npmPackages: [spec] } }, opts);
    expect(r.ok, JSON.stringify(r)).toBe(true);
  });

  it.each([
    ["name@file:/etc"],
    ["name@file:../x"],
    ["name@github:user/repo"],
    ["name@link:../x"],
    ["name@../x"],
    ["name@/abs/path"],
    ["name@git+https://example.com/r.git"],
    ["name@git+ssh://git@example.com/r.git"],
    ["name@https://example.com/x.tgz"],
    ["https://example.com/x.tgz"],
    ["git+https://example.com/r.git"],
    ["github:user/repo"],
    ["user/repo"],
    ["./local-folder"],
    ["../up"],
    ["/abs/folder"],
    ["file:x"],
    ["pkg.tgz"],
    ["pkg.tar.gz"],
    ["alias@npm:other@1.0.0"],
    ["name@latest"],
    ["name@"],
    ["Name@1.0.0"],
    ["name@1.0.0 && rm"],
    ["@scope@1.0.0"],
    ["~/home/pkg"],
  ])("refuses %s, naming the field", (spec) => {
    const r = refusedWith({ ...base, dependencies: { npmPackages: ["ok-first", spec] } });
    expect(r).toMatchObject({ code: "manifest_npm_not_registry", field: "dependencies.npmPackages[1]" });
  });
});
