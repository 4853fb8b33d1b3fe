// Each app's own config document, replaced only at the revision its writer read.
import { revisionOf } from "../../kernel/contracts/revision";

export class AppConfigs {
  constructor(private readonly sql: SqlStorage) {}

  async read(name: string): Promise<{ config: Record<string, unknown>; revision: string }> {
    const row = this.sql.exec("SELECT config FROM app_config WHERE name = ?", name).toArray()[0];
    const config = row ? (JSON.parse(String(row.config)) as Record<string, unknown>) : {};
    return { config, revision: await revisionOf(config) };
  }

  /**
   * Read and write happen in one turn of the object, so two writers can never both win: `stale`
   * when the document is no longer at `basedOn`, nothing written.
   */
  async replace(
    name: string,
    basedOn: string,
    config: Record<string, unknown>,
  ): Promise<{ ok: true; revision: string } | { ok: false; reason: "stale" }> {
    const current = await this.read(name);
    if (current.revision !== basedOn) return { ok: false, reason: "stale" };
    this.sql.exec("INSERT OR REPLACE INTO app_config (name, config) VALUES (?, ?)", name, JSON.stringify(config));
    return { ok: true, revision: await revisionOf(config) };
  }

  remove(name: string): void {
    this.sql.exec("DELETE FROM app_config WHERE name = ?", name);
  }
}
