// Gives a Durable Object's SQLite storage its permanent name on first open (see
// kernel/contracts/store-identity.ts); every DO class calls this beside its own schema.
import { STORE_IDENTITY_CLAIM, STORE_IDENTITY_SCHEMA } from "../kernel/contracts/store-identity";

/** Creates the identity row once; an existing store keeps the name it has. */
export function claimStoreIdentity(sql: { exec: (query: string, ...bindings: unknown[]) => unknown }): void {
  sql.exec(STORE_IDENTITY_SCHEMA);
  sql.exec(STORE_IDENTITY_CLAIM, crypto.randomUUID(), new Date().toISOString());
}
