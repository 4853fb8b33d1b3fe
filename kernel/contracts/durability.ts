// Backup and restore (docs/backup-and-restore.md): what each Durable Object hands out as its
// consistent export, what the bridge reads back from the gateway to write an archive, and the
// manifest every archive carries in the clear (signed; its parts are sealed to a passphrase).
import { z } from "zod";
import { MacHexSchema } from "./security-event";

/** One SQLite value as JSON: a BLOB travels as {"b64": "..."}; TEXT, INTEGER, REAL and NULL as themselves. */
export const StoredValueSchema = z.union([z.string(), z.number(), z.null(), z.strictObject({ b64: z.string() })]);
export type StoredValue = z.infer<typeof StoredValueSchema>;

/** One table as its object keeps it: the statement that made it, its columns and every row. */
export const TableExportSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
  sql: z.string(),
  columns: z.array(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/)),
  rows: z.array(z.array(StoredValueSchema)),
});
export type TableExport = z.infer<typeof TableExportSchema>;

/** A Durable Object's whole storage at one instant: its tables and indexes, read in one synchronous pass. */
export const StoreExportSchema = z.strictObject({
  tables: z.array(TableExportSchema),
  indexes: z.array(z.strictObject({ name: z.string(), sql: z.string() })),
});
export type StoreExport = z.infer<typeof StoreExportSchema>;

/** The log's newest row at its export and the checkpoint covering it, verifiable offline with `public_key`. */
export const LogExportFactsSchema = z.strictObject({
  head: z.strictObject({ seq: z.number().int().min(0), mac: MacHexSchema }),
  checkpoint: z.strictObject({
    note: z.string(),
    public_key: z.string(),
    origin: z.string(),
    seq: z.number().int(),
    row_seq: z.number().int(),
  }),
});
export type LogExportFacts = z.infer<typeof LogExportFactsSchema>;

/** The SecurityLog's export: its tables, and its head and checkpoint taken in the same pass. */
export const SecurityLogExportSchema = StoreExportSchema.extend({ log: LogExportFactsSchema });
export type SecurityLogExport = z.infer<typeof SecurityLogExportSchema>;

export const DURABLE_STORE_NAMES = ["SessionStore", "AppRegistry", "ApprovalStore", "EventHub"] as const;

/** What the gateway hands the bridge for one backup: every object's export. */
export const GatewayStateExportSchema = z.strictObject({
  stores: z.strictObject({
    SessionStore: StoreExportSchema,
    AppRegistry: StoreExportSchema,
    ApprovalStore: StoreExportSchema,
    EventHub: StoreExportSchema,
    SecurityLog: SecurityLogExportSchema,
  }),
});
export type GatewayStateExport = z.infer<typeof GatewayStateExportSchema>;

/** The passphrase that seals an archive: given by the owner, never stored, never an argument. */
export const BackupPassphraseSchema = z.string().min(8).max(1024);
export const BackupRequestSchema = z.strictObject({ passphrase: BackupPassphraseSchema });

/** One restored app's packages, installed again or not (with the failure's stable code and sentence). */
export const PackagesOutcomeSchema = z.strictObject({
  name: z.string().max(64),
  ok: z.boolean(),
  code: z.string().max(64).optional(),
  reason: z.string().max(2000).optional(),
});
export type PackagesOutcome = z.infer<typeof PackagesOutcomeSchema>;
