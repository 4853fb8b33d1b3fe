// Schema steps on Durable Object SQLite itself (the durable tier runs in workerd): each step once,
// in order, recorded in schema_steps with its statements in one transaction; every Durable Object
// of the gateway records its own; a released step keeps its bytes.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applySchemaSteps, SchemaNewerThanCodeError, type SchemaStep, type SchemaStore } from "./schema-steps";
import { SESSION_SCHEMA_STEPS } from "./session-store/schema";
import { APP_REGISTRY_SCHEMA_STEPS } from "./app-registry/schema";
import { APPROVAL_SCHEMA_STEPS } from "./approval-store/schema";
import { SECURITY_LOG_SCHEMA_STEPS } from "./security-log/schema";
import { inScratchStore } from "../test/helpers/durable-store";
import type { Env } from "./env";

const AT = new Date("2026-12-06T10:00:00.000Z");

const STEPS: SchemaStep[] = [
  { step: 1, does: "notes", apply: ["CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"] },
  { step: 2, does: "notes gain a title", apply: ["ALTER TABLE notes ADD COLUMN title TEXT"] },
];

function recorded(sql: SchemaStore) {
  return sql.exec("SELECT step, does, applied_at FROM schema_steps ORDER BY step").toArray();
}

function tables(sql: SchemaStore): string[] {
  return sql
    .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name")
    .toArray()
    .map((row) => String(row.name));
}

function columns(sql: SchemaStore, table: string): string[] {
  return sql
    .exec(`PRAGMA table_info(${table})`)
    .toArray()
    .map((row) => String(row.name));
}

describe("Durable Object SQLite", () => {
  it(
    "refuses PRAGMA user_version and BEGIN, which is why the steps are a table and transactionSync",
    inScratchStore((sql) => {
      expect(() => sql.exec("PRAGMA user_version = 2")).toThrow(/SQLITE_AUTH/);
      expect(() => sql.exec("BEGIN")).toThrow(/transaction/);
    }),
  );
});

describe("applySchemaSteps", () => {
  it(
    "applies every step of a fresh store once, in order, each recorded with what it does",
    inScratchStore((sql) => {
      expect(applySchemaSteps(sql, STEPS, () => AT)).toEqual([1, 2]);
      expect(columns(sql, "notes")).toEqual(["id", "text", "title"]);
      expect(recorded(sql)).toEqual([
        { step: 1, does: "notes", applied_at: AT.toISOString() },
        { step: 2, does: "notes gain a title", applied_at: AT.toISOString() },
      ]);
      expect(applySchemaSteps(sql, STEPS)).toEqual([]);
      expect(recorded(sql)).toHaveLength(2);
    }),
  );

  it(
    "applies to an older store only the steps it has not recorded, keeping its rows",
    inScratchStore((sql) => {
      applySchemaSteps(sql, STEPS.slice(0, 1));
      sql.exec("INSERT INTO notes (text) VALUES ('kept')");
      expect(applySchemaSteps(sql, STEPS)).toEqual([2]);
      expect(sql.exec("SELECT text, title FROM notes").toArray()).toEqual([{ text: "kept", title: null }]);
    }),
  );

  it(
    "leaves nothing of a step that fails, neither its statements nor its row, and applies it at the next open",
    inScratchStore((sql) => {
      const failing: SchemaStep = {
        step: 2,
        does: "notes gain a title",
        apply: (store) => {
          store.exec("ALTER TABLE notes ADD COLUMN title TEXT");
          store.exec("CREATE TABLE half (x)");
          throw new Error("killed mid-step");
        },
      };
      expect(() => applySchemaSteps(sql, [STEPS[0]!, failing])).toThrow("killed mid-step");
      expect(recorded(sql).map((row) => row.step)).toEqual([1]);
      expect(columns(sql, "notes")).toEqual(["id", "text"]);
      expect(tables(sql)).not.toContain("half");
      expect(applySchemaSteps(sql, STEPS)).toEqual([2]);
      expect(columns(sql, "notes")).toEqual(["id", "text", "title"]);
    }),
  );

  it(
    "refuses, untouched, a store that records a step this code does not know",
    inScratchStore((sql) => {
      applySchemaSteps(sql, [...STEPS, { step: 3, does: "later", apply: ["CREATE TABLE later (x)"] }]);
      const before = tables(sql);
      expect(() => applySchemaSteps(sql, STEPS)).toThrow(SchemaNewerThanCodeError);
      expect(tables(sql)).toEqual(before);
      expect(recorded(sql)).toHaveLength(3);
    }),
  );

  it(
    "refuses a list not numbered 1, 2, 3, ... before writing anything",
    inScratchStore((sql) => {
      expect(() => applySchemaSteps(sql, [STEPS[1]!])).toThrow("schema step 1 is numbered 2");
      expect(() => applySchemaSteps(sql, [STEPS[0]!, STEPS[0]!])).toThrow("schema step 2 is numbered 1");
      expect(tables(sql)).toEqual([]);
    }),
  );
});

describe("the gateway's Durable Objects", () => {
  const objects = [
    ["SessionStore", "SESSIONS", SESSION_SCHEMA_STEPS],
    ["AppRegistry", "APPS", APP_REGISTRY_SCHEMA_STEPS],
    ["ApprovalStore", "APPROVALS", APPROVAL_SCHEMA_STEPS],
    ["SecurityLog", "SECURITY_LOG", SECURITY_LOG_SCHEMA_STEPS],
  ] as const;

  for (const [className, binding, steps] of objects) {
    it(`${className} records each of its schema steps at its first open`, async () => {
      const namespace = (env as unknown as Env)[binding] as unknown as DurableObjectNamespace;
      const stub = namespace.get(namespace.idFromName("main"));
      const rows = await runInDurableObject(stub, (_object, state) =>
        state.storage.sql.exec("SELECT step, does FROM schema_steps ORDER BY step").toArray(),
      );
      expect(rows).toEqual(steps.map(({ step, does }) => ({ step, does })));
    });
  }

  it(
    "a session store made before the steps (no schema_steps, sessions without the later columns) gains them with its rows kept",
    inScratchStore((sql) => {
      sql.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, kind TEXT NOT NULL, app TEXT, issuer TEXT NOT NULL,
        secret_hash TEXT NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        signed_in_at INTEGER NOT NULL, open_until INTEGER, bound_address TEXT, opened_at INTEGER)`);
      sql.exec(`CREATE TABLE ended_sessions (id TEXT PRIMARY KEY, reason TEXT NOT NULL, at INTEGER NOT NULL)`);
      sql.exec("INSERT INTO sessions VALUES ('s1', 'browser', NULL, 'owner', 'h', 1, 1, 9, 1, NULL, NULL, NULL)");
      expect(applySchemaSteps(sql, SESSION_SCHEMA_STEPS)).toEqual([1, 2]);
      expect(columns(sql, "sessions")).toEqual(expect.arrayContaining(["name", "user_agent", "secret_sha256"]));
      expect(columns(sql, "ended_sessions")).toContain("secret_sha256");
      expect(sql.exec("SELECT id, name FROM sessions").toArray()).toEqual([{ id: "s1", name: null }]);
    }),
  );
});

/**
 * The sha256 of every released step's words and statements. A store records a step once and never
 * looks at it again, so an edited step would reach new stores only: a change is a new step, with
 * its digest added here when it is released.
 */
const RELEASED: Record<string, string[]> = {
  SessionStore: [
    "5a34e294b43ba517d65fc66673f7ba54a2632567b109c2f46247179f96bfa112",
    "6554a45437946a10e535d31232ecc158c473a8e2c23b50e82984415277038010",
  ],
  AppRegistry: [
    "6bc3b58369d1351df94f99c4962df8769646c56c383b24d9ee30b48c02954100",
    "28d81faa23b09c5eeab62323c67ef2f0be0826b004240e9f645889be6ad9ad93",
  ],
  ApprovalStore: ["af638cb7136ece627034db0e187e1a45afa411ae2eca90125fe3e4ed6c2b6f73"],
  SecurityLog: [
    "4568c2d95f95f11edcaa2e5edc9bd9c38bb75c2136cf295fe82670e88683bc2b",
    "ff5f52d8fc707e2a447294110341d56f330635087fcc4d910be771d8dfde9782",
    "c0334ac7c27cd5049f2ac796a131bb1d7701a583d5e5a74e4b4b333556e9c40a",
  ],
};

async function stepDigest(step: SchemaStep): Promise<string> {
  const words = JSON.stringify([step.step, step.does, typeof step.apply === "function" ? null : step.apply]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(words));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

describe("released schema steps", () => {
  it("keep their bytes: a change to a schema is a new step", async () => {
    const all = {
      SessionStore: SESSION_SCHEMA_STEPS,
      AppRegistry: APP_REGISTRY_SCHEMA_STEPS,
      ApprovalStore: APPROVAL_SCHEMA_STEPS,
      SecurityLog: SECURITY_LOG_SCHEMA_STEPS,
    };
    const digests: Record<string, string[]> = {};
    for (const [name, steps] of Object.entries(all)) digests[name] = await Promise.all(steps.map(stepDigest));
    expect(digests).toEqual(RELEASED);
  });
});
