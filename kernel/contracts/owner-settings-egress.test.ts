// egress.extra_ca_certs: more authorities that may vouch for an origin receiving a secret.
import { describe, expect, it } from "vitest";
import { settingAt, settingValueRefusal } from "./owner-settings";

describe("egress.extra_ca_certs", () => {
  const spec = settingAt("egress.extra_ca_certs")!;

  it("is a security setting no app may declare, empty by default", () => {
    expect(spec).toMatchObject({ security: true, default: "", type: "path" });
  });

  it("naming a file, or another file, loosens; clearing it does not", () => {
    expect(spec.loosens("", "/etc/corp-ca.pem")).toBe(true);
    expect(spec.loosens("/etc/corp-ca.pem", "/etc/other-ca.pem")).toBe(true);
    expect(spec.loosens("/etc/corp-ca.pem", "")).toBe(false);
    expect(spec.loosens("/etc/corp-ca.pem", "/etc/corp-ca.pem")).toBe(false);
  });

  it("takes an absolute path or nothing", () => {
    for (const ok of ["", "/etc/corp-ca.pem"]) expect(settingValueRefusal(spec, ok), ok).toBeNull();
    for (const bad of ["corp-ca.pem", "./ca.pem", "/etc/ca\0.pem", 3, ["/a"], `/${"a".repeat(4096)}`])
      expect(settingValueRefusal(spec, bad), String(bad)).not.toBeNull();
  });
});
