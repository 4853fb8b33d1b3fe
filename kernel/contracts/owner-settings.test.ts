import { describe, expect, it } from "vitest";
import { OWNER_SETTINGS, settingAt, settingNameRefusal, settingValueRefusal } from "./owner-settings";
import { validateManifest } from "./manifest";

const opts = { reservedNames: new Set<string>(), fromNativeFolder: false, core: { version: "0.1.0", features: [] } };

describe("the editable settings", () => {
  it("names every path once, each with a default inside its own bounds", () => {
    const paths = OWNER_SETTINGS.map((s) => s.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const spec of OWNER_SETTINGS) expect(settingValueRefusal(spec, spec.default), spec.path).toBeNull();
  });

  it("auth.session_ttl stops at 90 days and says so", () => {
    const ttl = settingAt("auth.session_ttl")!;
    expect(settingValueRefusal(ttl, 90 * 86_400)).toBeNull();
    expect(settingValueRefusal(ttl, 90 * 86_400 + 1)).toContain("90 days");
  });

  it("says which changes loosen security", () => {
    const loosens = (path: string, from: unknown, to: unknown) => settingAt(path)!.loosens(from as never, to as never);
    expect(loosens("sandbox.mode", "on", "off")).toBe(true);
    expect(loosens("sandbox.mode", "off", "on")).toBe(false);
    expect(loosens("auth.session_ttl", 86_400, 2 * 86_400)).toBe(true);
    expect(loosens("logs.security_retention_days", 365, 30)).toBe(true);
    expect(loosens("sandbox.env_passthrough", ["A"], ["A", "B"])).toBe(true);
    expect(loosens("sandbox.env_passthrough", ["A", "B"], ["A"])).toBe(false);
    expect(loosens("gateway.bind_host", "127.0.0.1", "0.0.0.0")).toBe(true);
    expect(loosens("gateway.bind_host", "0.0.0.0", "127.0.0.1")).toBe(false);
  });

  it("each setting's loosening predicate follows its lattice: wider reach, longer life, larger limit, more names, weaker bounds", () => {
    const loosens = (path: string, from: unknown, to: unknown) => settingAt(path)!.loosens(from as never, to as never);
    // Each list runs from tightest to loosest; a move towards the end loosens, any other does not.
    const lattices: Record<string, unknown[]> = {
      "auth.session_ttl": [300, 86_400, 90 * 86_400],
      "gateway.bind_host": ["127.0.0.1", "192.168.1.20", "0.0.0.0", "::"],
      "sandbox.mode": ["on", "off"],
      "sandbox.limits.processes": [16, 256, 65_536],
      "sandbox.limits.memory_mb": [64, 1024, 1_048_576],
      "sandbox.limits.storage_mb": [64, 4096, 16_777_216],
      "sandbox.env_passthrough": [[], ["A"], ["A", "B"]],
      "sandbox.network_all": [[], ["notes"], ["notes", "weather"]],
      "sandbox.bounds": ["cgroup", "systemd-scope", "rlimit"],
      "logs.security_retention_days": [3650, 365, 30],
    };
    for (const [path, values] of Object.entries(lattices)) {
      for (const [i, from] of values.entries())
        for (const [j, to] of values.entries())
          expect(loosens(path, from, to), `${path}: ${JSON.stringify(from)} → ${JSON.stringify(to)}`).toBe(j > i);
    }
    // auto takes the strongest mechanism that works: leaving it for a named weaker one loosens.
    expect(loosens("sandbox.bounds", "auto", "rlimit")).toBe(true);
    expect(loosens("sandbox.bounds", "auto", "cgroup")).toBe(false);
    expect(loosens("sandbox.bounds", "rlimit", "auto")).toBe(false);
    // A list swapped for another of the same length still hands over a name it did not.
    expect(loosens("sandbox.env_passthrough", ["A"], ["B"])).toBe(true);
    for (const spec of OWNER_SETTINGS.filter((s) => !s.security))
      expect(spec.loosens(spec.default, spec.default)).toBe(false);
  });

  it("install.mcp_registries: adding a registry or moving one ahead loosens, removing one does not; each is a source URL", () => {
    const spec = settingAt("install.mcp_registries")!;
    const official = "https://registry.modelcontextprotocol.io";
    const mirror = "https://mcp.example.com/registry";
    expect(spec.default).toEqual([official]);
    expect(spec.security).toBe(true);
    expect(spec.loosens([official], [official, mirror])).toBe(true);
    expect(spec.loosens([official, mirror], [mirror, official])).toBe(true);
    expect(spec.loosens([official, mirror], [official])).toBe(false);
    expect(spec.loosens([official, mirror], [mirror])).toBe(false);
    expect(spec.loosens([official], [])).toBe(false);
    expect(settingValueRefusal(spec, [official, "http://127.0.0.2:4000"])).toBeNull();
    for (const bad of ["ftp://r.example", "https://user:pw@r.example", "https://r.example/?q=1", "not a url"])
      expect(settingValueRefusal(spec, [bad]), bad).not.toBeNull();
    expect(settingValueRefusal(spec, [official, official])).not.toBeNull();
    expect(settingNameRefusal(spec, "https://r.example/#x")).not.toBeNull();
  });

  it("a manifest may declare only non-security settings, and never an unknown path (GRANT-01)", () => {
    const manifest = (config: unknown) => ({ name: "a", version: "1", permissions: { api: ["/api/config"], config } });
    expect(validateManifest(manifest(["proxy.response_timeout_s"]), opts).ok).toBe(true);
    expect(validateManifest(manifest({ read: ["updates.auto"], write: ["updates.auto"] }), opts).ok).toBe(true);
    const security = validateManifest(manifest({ write: ["sandbox.env_passthrough"] }), opts);
    expect(security).toMatchObject({
      ok: false,
      code: "manifest_config_security",
      field: "permissions.config.write[0]",
    });
    expect(validateManifest(manifest(["voice.echo_filter_enabled"]), opts)).toMatchObject({
      ok: false,
      code: "manifest_invalid",
    });
  });

  it("a declared secret name may not be one the bridge or a loader reads", () => {
    const manifest = (name: string) => ({ name: "a", version: "1", secrets: [{ name, why: "x" }] });
    expect(validateManifest(manifest("WEATHER_API_KEY"), opts).ok).toBe(true);
    for (const name of ["PATH", "NODE_OPTIONS", "PERSONALCLAW_APP_SECRET", "LD_PRELOAD", "PCSECRET_X", "lower"]) {
      expect(validateManifest(manifest(name), opts), name).toMatchObject({
        ok: false,
        code: "manifest_invalid",
        field: "secrets[0].name",
      });
    }
  });
});
