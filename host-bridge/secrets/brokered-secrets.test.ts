// What an app's broker holds of a placeholder secret: a reader of the app's sealed copy, read
// again at each request (a replaced value applies at once, a deleted one is gone), never the
// value handed over at its start; a secret without `use` still arrives as its value.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

const ownerManifest = AppManifestSchema.parse({
  ...manifest,
  permissions: { network: ["api.example.com", "eu.example.com"] },
  secrets: [
    {
      name: "API_KEY",
      why: "the forecast",
      use: { origins: ["https://api.example.com", "https://eu.example.com"], header: "Authorization" },
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
    expect(secrets.map((s) => [s.name, s.origins().map((o) => o.origin)])).toEqual([
      ["API_KEY", ["https://api.example.com"]],
    ]);
    expect(refused).toEqual([]);
  });

  it("reads the current value at each call: a replaced value at once, a deleted one as nothing", () => {
    const [secret] = brokeredSecrets(store, weather, manifest).secrets;
    const api = "https://api.example.com";
    expect(secret!.read(api)).toBe("API_KEY-value-1");
    store.put("API_KEY", "API_KEY-value-2", [weather]);
    expect(secret!.read(api)).toBe("API_KEY-value-2");
    store.delete("API_KEY");
    expect(secret!.read(api)).toBeNull();
  });

  it("origins the owner sets apply at the next request, and the value opens only for them", () => {
    const [secret] = brokeredSecrets(store, weather, ownerManifest).secrets;
    expect(secret!.origins().map((o) => o.origin)).toEqual(["https://api.example.com", "https://eu.example.com"]);
    expect(secret!.read("https://eu.example.com")).toBe("API_KEY-value-1");
    // The owner narrows it to one origin while the child runs.
    store.assign("API_KEY", "API_KEY", weather, ["https://api.example.com"]);
    expect(secret!.origins().map((o) => o.origin)).toEqual(["https://api.example.com"]);
    expect(secret!.read("https://eu.example.com")).toBeNull();
    expect(secret!.read("https://api.example.com")).toBe("API_KEY-value-1");
    // A replaced value keeps the owner's origins.
    store.put("API_KEY", "API_KEY-value-2", [weather]);
    expect(secret!.origins().map((o) => o.origin)).toEqual(["https://api.example.com"]);
    expect(secret!.read("https://api.example.com")).toBe("API_KEY-value-2");
  });

  it("an origin written into a copy's file by hand makes it open for nobody", () => {
    store.assign("API_KEY", "API_KEY", weather, ["https://api.example.com"]);
    const file = join(home, "secrets", "apps", "weather", "API_KEY.json");
    const sealed = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...sealed, origins: ["https://eu.example.com"] }));
    const [secret] = brokeredSecrets(store, weather, ownerManifest).secrets;
    // Routing follows the file, but the value never opens for it.
    expect(secret).toBeUndefined();
    expect(brokeredSecrets(store, weather, ownerManifest).refused).toEqual(["API_KEY"]);
    expect(store.openAppSecret(weather, "API_KEY")).toBe("refused");
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
