import { describe, expect, it } from "vitest";
import { OWNER_SETTINGS, settingAt, settingValueRefusal } from "./owner-settings";
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
