// A Durable Object's own SQLite storage for a test in the durable tier (it runs in workerd). Each
// store is a fresh SqlScratch object (test/helpers/durable-pool-worker.ts); its storage can be
// used only inside that object, so a test's work on it runs there, through `run`.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { storageSchemaStore, type SchemaStore } from "../../durable/schema-steps";
import type { SqlScratch } from "./durable-pool-worker";

interface ScratchEnv {
  SCRATCH: DurableObjectNamespace<SqlScratch>;
}

export interface ScratchStore {
  /** Runs `body` inside the object, with its storage as the SQL port the durable code takes. */
  run<T>(body: (sql: SchemaStore, storage: DurableObjectStorage) => T | Promise<T>): Promise<T>;
}

/** A new, empty store: no test sees another's rows. */
export function scratchStore(): ScratchStore {
  const namespace = (env as unknown as ScratchEnv).SCRATCH;
  const stub = namespace.get(namespace.newUniqueId());
  return {
    run: (body) => runInDurableObject(stub, (_object, state) => body(storageSchemaStore(state.storage), state.storage)),
  };
}

/** A test body run inside a fresh store: `it("...", inScratchStore(async (sql) => { ... }))`. */
export function inScratchStore(
  body: (sql: SchemaStore, storage: DurableObjectStorage) => unknown,
): () => Promise<void> {
  return async () => {
    await scratchStore().run(body);
  };
}
