// Pairing codes on the real runtime (the durable tier runs in workerd): a code the owner created
// pairs one machine, once, before it expires; a code not created here pairs nothing; and step 2
// of the schema keeps the machines step 1 paired.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { applySchemaSteps } from "../schema-steps";
import { BRIDGE_LINK_SCHEMA_STEPS } from "./schema";
import { inScratchStore } from "../../test/helpers/durable-store";
import { PAIRING_CODE_TTL_MS } from "../../kernel/contracts/bridge-link";
import type { Env } from "../env";

const NOW = Date.parse("2026-12-06T10:00:00.000Z");
const key = (n: number) => n.toString(16).padStart(64, "0");
const machine = (n: number) => n.toString(16).padStart(32, "0");

/** A pairing instance of its own for one test. */
function pairing() {
  const links = (env as unknown as Env).BRIDGE_LINKS;
  return links.get(links.idFromName(`pairing-test-${crypto.randomUUID()}`));
}

describe("a pairing code", () => {
  it("pairs one machine and is spent: the same code again pairs nothing", async () => {
    const store = pairing();
    await store.pairFirst(machine(1), key(1), NOW);
    await store.addPairingCode("hash-a", NOW, NOW + PAIRING_CODE_TTL_MS);
    expect(await store.pairWithCode("hash-a", machine(2), key(2), NOW + 1_000)).toMatchObject({ ok: true });
    expect(await store.keyOf(machine(2))).toBe(key(2));
    expect(await store.pairWithCode("hash-a", machine(3), key(3), NOW + 2_000)).toEqual({
      ok: false,
      reason: "the code was used",
    });
    expect(await store.keyOf(machine(3))).toBeNull();
    // The first machine stays the one the edge calls.
    expect(await store.firstMachine()).toBe(machine(1));
  });

  it("pairs nothing once expired, and a code never created here pairs nothing", async () => {
    const store = pairing();
    await store.addPairingCode("hash-b", NOW, NOW + PAIRING_CODE_TTL_MS);
    expect(await store.pairWithCode("hash-b", machine(4), key(4), NOW + PAIRING_CODE_TTL_MS)).toEqual({
      ok: false,
      reason: "the code expired",
    });
    expect(await store.pairWithCode("hash-never", machine(4), key(4), NOW)).toEqual({
      ok: false,
      reason: "not a code created here",
    });
    expect(await store.keyOf(machine(4))).toBeNull();
  });

  it("does not pair a machine again, and is not spent by the attempt", async () => {
    const store = pairing();
    await store.pairFirst(machine(5), key(5), NOW);
    await store.addPairingCode("hash-c", NOW, NOW + PAIRING_CODE_TTL_MS);
    expect(await store.pairWithCode("hash-c", machine(5), key(5), NOW)).toEqual({
      ok: false,
      reason: "the machine is paired",
    });
    expect(await store.pairWithCode("hash-c", machine(6), key(6), NOW)).toMatchObject({ ok: true });
  });
});

describe("a forgotten machine", () => {
  it("links no more and never pairs again; the secret stays spent; the next machine runs the apps", async () => {
    const store = pairing();
    await store.pairFirst(machine(11), key(11), NOW);
    await store.addPairingCode("hash-f", NOW, NOW + PAIRING_CODE_TTL_MS);
    await store.pairWithCode("hash-f", machine(12), key(12), NOW + 1_000);
    expect(await store.forget(machine(11), NOW + 2_000)).toBe(true);
    expect(await store.forget(machine(11), NOW + 3_000)).toBe(false);
    expect(await store.forget(machine(99), NOW + 3_000)).toBe(false);
    expect(await store.keyOf(machine(11))).toBeNull();
    expect(await store.firstMachine()).toBe(machine(12));
    expect((await store.machines()).map((m) => [m.machine, m.forgottenAt])).toEqual([
      [machine(11), new Date(NOW + 2_000).toISOString()],
      [machine(12), null],
    ]);
    // Its key cannot come back through a code, nor through the pairing secret, even once every machine is forgotten.
    await store.addPairingCode("hash-g", NOW, NOW + PAIRING_CODE_TTL_MS);
    expect(await store.pairWithCode("hash-g", machine(11), key(11), NOW + 4_000)).toEqual({
      ok: false,
      reason: "the machine was forgotten",
    });
    expect(await store.forget(machine(12), NOW + 5_000)).toBe(true);
    expect(await store.firstMachine()).toBeNull();
    expect(await store.pairFirst(machine(13), key(13), NOW + 6_000)).toEqual({ ok: false, reason: "spent" });
  });
});

describe("BridgeLink's schema step 2", () => {
  it("keeps the machines step 1 paired and lets a machine be paired by a code", () =>
    inScratchStore((sql) => {
      applySchemaSteps(sql, BRIDGE_LINK_SCHEMA_STEPS.slice(0, 1));
      sql.exec("INSERT INTO machines VALUES (?, ?, ?, 'pairing_secret')", machine(7), key(7), "2026-12-01T00:00:00Z");
      expect(() =>
        sql.exec("INSERT INTO machines VALUES (?, ?, ?, 'pairing_code')", machine(8), key(8), "2026-12-01T00:00:00Z"),
      ).toThrow(/CHECK/);
      applySchemaSteps(sql, BRIDGE_LINK_SCHEMA_STEPS);
      expect(sql.exec("SELECT machine, paired_by FROM machines").toArray()).toEqual([
        { machine: machine(7), paired_by: "pairing_secret" },
      ]);
      sql.exec(
        "INSERT INTO machines (machine, public_key, paired_at, paired_by) VALUES (?, ?, ?, 'pairing_code')",
        machine(8),
        key(8),
        "2026-12-01T00:00:00Z",
      );
      expect(sql.exec("SELECT COUNT(*) AS n FROM pairing_codes").toArray()).toEqual([{ n: 0 }]);
      // Step 3 marks forgotten machines; the machines before it are not.
      expect(sql.exec("SELECT COUNT(*) AS n FROM machines WHERE forgotten_at IS NULL").toArray()).toEqual([{ n: 2 }]);
    }));
});
