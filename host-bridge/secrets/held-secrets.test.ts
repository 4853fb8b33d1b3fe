// "Restart pending" for a backend's secrets: after an assignment, a taking back or a replaced
// value the running backend holds other secrets than a start now would give it; a start with
// them clears it; a placeholder secret (read again at every request) never makes it pending.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { SecretStore, secretStorePaths } from "./secret-store";
import { HeldSecrets, startHeldSecretNames } from "./held-secrets";

const weather = { app: "weather", digest: "sha256:aaaa" };
const manifest = AppManifestSchema.parse({
  name: "weather",
  version: "1.0.0",
  permissions: { network: ["api.example.com"] },
  secrets: [
    { name: "HELD_KEY", why: "an SDK that wants it" },
    { name: "API_KEY", why: "the forecast", use: { origins: ["https://api.example.com"], header: "Authorization" } },
  ],
});

describe("HeldSecrets", () => {
  let home: string;
  let store: SecretStore;
  let held: HeldSecrets;
  /** What a start now gives the backend, recorded as the supervisor's start does. */
  const start = () => held.started("weather", store.openAppSecrets(weather, startHeldSecretNames(manifest)).env);
  const pending = () => held.restartPending("weather", store, manifest, weather.digest);

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "pc-held-"));
    store = new SecretStore(secretStorePaths(home));
    held = new HeldSecrets();
    store.put("ONE", "first-value-1234", []);
    store.put("TWO", "second-value-5678", []);
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("counts only the secrets a backend holds the value of", () => {
    expect(startHeldSecretNames(manifest)).toEqual(["HELD_KEY"]);
  });

  it("is pending after an assignment, a replaced value and a taking back, and clear after each start", () => {
    start();
    expect(pending()).toBe(false);
    store.assign("ONE", "HELD_KEY", weather);
    expect(pending()).toBe(true);
    start();
    expect(pending()).toBe(false);
    // Another stored secret under the same name, then the same secret with a new value.
    store.assign("TWO", "HELD_KEY", weather);
    expect(pending()).toBe(true);
    start();
    store.put("TWO", "second-value-changed", [weather]);
    expect(pending()).toBe(true);
    start();
    expect(store.unassign("weather", "HELD_KEY")).toBe(true);
    expect(pending()).toBe(true);
    start();
    expect(pending()).toBe(false);
  });

  it("is never pending for a placeholder secret, nor for a backend it saw no start of", () => {
    expect(pending()).toBe(false);
    store.assign("ONE", "HELD_KEY", weather);
    expect(pending()).toBe(false);
    start();
    store.assign("TWO", "API_KEY", weather);
    expect(pending()).toBe(false);
  });
});
