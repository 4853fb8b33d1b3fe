import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildChildEnv } from "../host-bridge/sandbox/child-env";
import { renderChildEnvironment, withChildEnvironment } from "./render-child-env";

const guidePath = join(import.meta.dirname, "..", "docs", "app-author-guide.md");

describe("the author guide's environment list", () => {
  it("is a fresh render of the child environment's allowlist (regenerate with npm run docs:guide)", () => {
    const guide = readFileSync(guidePath, "utf8");
    expect(withChildEnvironment(guide)).toBe(guide);
  });

  it("names every variable a backend really receives", () => {
    const parent = { PATH: "/usr/bin", LANG: "C.UTF-8", LC_ALL: "C", XDG_CONFIG_HOME: "/x", GITHUB_TOKEN: "gh" };
    const { env } = buildChildEnv(parent, {
      kind: "backend",
      app: { name: "notes", hasStorage: true, dataDir: "/d", secret: "s".repeat(32), port: 8080 },
      home: "/pc",
      workspace: "/w",
      gatewayPort: 10000,
      passthrough: [],
      sandboxed: true,
    });
    const rendered = renderChildEnvironment();
    for (const name of Object.keys(env)) {
      const family = name.startsWith("LC_") ? "LC_*" : name.startsWith("XDG_") ? "XDG_*" : name;
      expect(rendered, name).toContain(`\`${family}\``);
    }
    expect(rendered).not.toContain("GITHUB_TOKEN");
  });
});
