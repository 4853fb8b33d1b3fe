// What an app's broker holds of a placeholder secret: a reader of the app's sealed copy, read
// again at each request (a replaced value applies at once, a deleted one is gone), never the
// value handed over at its start; a secret without `use` still arrives as its value.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { SecretStore, secretStorePaths } from "./secret-store";
import { brokeredSecrets, placeholderSecretNames } from "./brokered-secrets";

const weather = { app: "weather", digest: "sha256:aaaa" };
const manifest = AppManifestSchema.parse({
  name: "weather",
  version: "1.0.0",
  permissions: { network: ["api.example.com"] },
  secrets: [
    {
      name: "API_KEY",
      why: "the forecast",
      use: { origins: ["https://api.example.com"], header: "Authorization", format: "Bearer {value}" },
    },
    { name: "HELD_KEY", why: "an SDK that wants https" },
    {
      name: "HELD_WITH_USE",
      why: "declared, yet held",
      use: { origins: ["https://api.example.com"], query: "key" },
      delivery: "env",
    },
  ],
});

describe("brokered secrets", () => {
  let home: string;
  let store: SecretStore;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "pc-brokered-"));
    store = new SecretStore(secretStorePaths(home));
    for (const name of ["API_KEY", "HELD_KEY", "HELD_WITH_USE"]) {
      store.put(name, `${name}-value-1`, [weather]);
      store.assign(name, name, weather);
    }
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("only a secret with a use and no env delivery is brokered; the others arrive as their value", () => {
    expect([...placeholderSecretNames(manifest)]).toEqual(["API_KEY"]);
    const { secrets, refused } = brokeredSecrets(store, weather, manifest);
    expect(secrets.map((s) => [s.name, s.origins.map((o) => o.origin)])).toEqual([
      ["API_KEY", ["https://api.example.com"]],
    ]);
    expect(refused).toEqual([]);
  });

  it("reads the current value at each call: a replaced value at once, a deleted one as nothing", () => {
    const [secret] = brokeredSecrets(store, weather, manifest).secrets;
    expect(secret!.read()).toBe("API_KEY-value-1");
    store.put("API_KEY", "API_KEY-value-2", [weather]);
    expect(secret!.read()).toBe("API_KEY-value-2");
    store.delete("API_KEY");
    expect(secret!.read()).toBeNull();
  });

  it("a copy sealed for another app is refused, not brokered", () => {
    const thief = { app: "thief", digest: "sha256:bbbb" };
    mkdirSync(join(home, "secrets", "apps", "thief"), { recursive: true });
    copyFileSync(
      join(home, "secrets", "apps", "weather", "API_KEY.json"),
      join(home, "secrets", "apps", "thief", "API_KEY.json"),
    );
    const opened = brokeredSecrets(store, thief, { ...manifest, name: "thief" });
    expect(opened.secrets).toEqual([]);
    expect(opened.refused).toEqual(["API_KEY"]);
  });
});
