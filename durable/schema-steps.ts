// How every Durable Object's SQLite schema grows: numbered steps, each applied once and in order,
// and recorded in the store's own schema_steps table in the same transaction as its statements,
// so a crash leaves a step either wholly applied and recorded or not begun. Durable Object SQLite
// refuses `PRAGMA user_version` (SQLITE_AUTH) and `BEGIN`, so the version is a table and the
// transaction is the storage's own (transactionSync).

export type SchemaBinding = string | number | null;

/** The slice of a Durable Object's storage the steps need: its SQL and its synchronous transaction. */
export interface SchemaStore {
  exec<T extends Record<string, unknown> = Record<string, unknown>>(
    query: string,
    ...bindings: SchemaBinding[]
  ): { toArray(): T[] };
  transact<T>(fn: () => T): T;
}

export interface SchemaStep {
  /** 1, 2, 3, ...: a released step is never edited or renumbered; a change to the schema is a new step. */
  step: number;
  /** What the step does, in words; kept in its row. */
  does: string;
  /**
   * Its statements, or a function for a step that must look first. A store made before steps
   * were recorded meets every step once, so a step must also hold on a store that already has
   * its effect (CREATE ... IF NOT EXISTS; a column added only where it is missing).
   */
  apply: readonly string[] | ((sql: SchemaStore) => void);
}

export const SCHEMA_STEPS_TABLE = "schema_steps";

const CREATE_STEPS_TABLE = `CREATE TABLE IF NOT EXISTS ${SCHEMA_STEPS_TABLE} (
  step INTEGER PRIMARY KEY,
  does TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

/** Thrown when a store was written by newer code than this: nothing is written to it. */
export class SchemaNewerThanCodeError extends Error {
  override name = "SchemaNewerThanCodeError";
}

/** The slice of a Durable Object's storage (ctx.storage) the steps use; typed here so Node-side tests compile it too. */
export interface DurableStorageSlice {
  sql: { exec(query: string, ...bindings: SchemaBinding[]): { toArray(): Array<Record<string, unknown>> } };
  transactionSync<T>(fn: () => T): T;
}

/** A Durable Object's own storage as the store the steps write: its SQL and its transactionSync. */
export function storageSchemaStore(storage: DurableStorageSlice): SchemaStore {
  const sql = storage.sql;
  return {
    // Bound, not wrapped: a wrapper would copy every row's bindings into a second array.
    exec: sql.exec.bind(sql) as SchemaStore["exec"],
    transact: (fn) => storage.transactionSync(fn),
  };
}

/** Refuses a list that is not numbered 1..n (a gap or a repeat would skip or rerun a step). */
function checkNumbering(steps: readonly SchemaStep[]): void {
  steps.forEach((step, index) => {
    if (step.step !== index + 1) throw new Error(`schema step ${index + 1} is numbered ${step.step}`);
  });
}

/**
 * Applies the steps this store has not recorded, each in its own transaction with its row, and
 * returns their numbers. A store that records a step this code does not have is refused untouched.
 */
export function applySchemaSteps(
  store: SchemaStore,
  steps: readonly SchemaStep[],
  now: () => Date = () => new Date(),
): number[] {
  checkNumbering(steps);
  store.exec(CREATE_STEPS_TABLE);
  const recorded = new Set(
    store
      .exec(`SELECT step FROM ${SCHEMA_STEPS_TABLE}`)
      .toArray()
      .map((row) => Number(row.step)),
  );
  const newest = Math.max(0, ...recorded);
  if (newest > steps.length) {
    throw new SchemaNewerThanCodeError(
      `this store records schema step ${newest}; this code knows steps up to ${steps.length}`,
    );
  }
  const applied: number[] = [];
  for (const step of steps) {
    if (recorded.has(step.step)) continue;
    store.transact(() => {
      if (typeof step.apply === "function") step.apply(store);
      else for (const statement of step.apply) store.exec(statement);
      store.exec(
        `INSERT INTO ${SCHEMA_STEPS_TABLE} (step, does, applied_at) VALUES (?, ?, ?)`,
        step.step,
        step.does,
        now().toISOString(),
      );
    });
    applied.push(step.step);
  }
  return applied;
}

/** Adds each column a table lacks; a column it has is left as it is (PRAGMA table_info is allowed in DO SQLite). */
export function addMissingColumns(
  sql: SchemaStore,
  table: string,
  columns: ReadonlyArray<readonly [name: string, type: string]>,
): void {
  const present = new Set(
    sql
      .exec(`PRAGMA table_info(${table})`)
      .toArray()
      .map((row) => String(row.name)),
  );
  for (const [column, type] of columns)
    if (!present.has(column)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
}
