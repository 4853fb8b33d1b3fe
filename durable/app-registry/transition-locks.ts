// Each app's one transition lock (LIFE-01), held in storage so an object unloaded
// mid-transition still knows; a lock lapses after its ttl in case its holder vanished.

export class TransitionLocks {
  constructor(private readonly sql: SqlStorage) {}

  /** The kind of the transition holding the app at `now`, or null. */
  heldBy(name: string, now: number): string | null {
    const held = this.sql.exec("SELECT kind, expires_at FROM transitions WHERE name = ?", name).toArray()[0];
    return held && Number(held.expires_at) > now ? String(held.kind) : null;
  }

  begin(
    name: string,
    kind: string,
    now: number,
    ttlMs: number,
  ): { ok: true; token: string } | { ok: false; kind: string } {
    const held = this.heldBy(name, now);
    if (held !== null) return { ok: false, kind: held };
    const token = crypto.randomUUID();
    this.sql.exec(
      "INSERT OR REPLACE INTO transitions (name, kind, token, expires_at) VALUES (?, ?, ?, ?)",
      name,
      kind,
      token,
      now + ttlMs,
    );
    return { ok: true, token };
  }

  /** A lock another transition took since is left alone. */
  end(name: string, token: string): void {
    this.sql.exec("DELETE FROM transitions WHERE name = ? AND token = ?", name, token);
  }

  /**
   * Locks whose request went away (the bridge settled their transitions): those of `name`, or
   * of every app, taken before `takenBefore`. A lock's taking time is its expiry less `ttlMs`,
   * the one ttl every lock is taken with. Answers the apps released.
   */
  releaseTakenBefore(name: string | null, takenBefore: number, ttlMs: number): string[] {
    const released = this.sql
      .exec(
        "DELETE FROM transitions WHERE (? IS NULL OR name = ?) AND expires_at - ? < ? RETURNING name",
        name,
        name,
        ttlMs,
        takenBefore,
      )
      .toArray()
      .map((row) => String(row.name));
    return released.sort();
  }

  /** A transition of an earlier start ended with it; the bridge's journals settle its files. */
  clearAll(): void {
    this.sql.exec("DELETE FROM transitions");
  }
}
