// App inboxes, each held to its quota (limits.ts): a sender must not be able to fill the
// gateway's storage through a receiving app's inbox.
import { INBOX_LIMITS } from "./limits";

/** A delivery's outcome; `detail` names the quota an inbox is full at. */
export interface DeliveryResult {
  ok: boolean;
  reason?: "unknown_app" | "too_large" | "full";
  detail?: string;
}

export class Inboxes {
  constructor(private readonly sql: SqlStorage) {}

  /** Checked and written in one turn of the object, so concurrent senders cannot overshoot a quota together. */
  deliver(recipient: string, sender: string, body: unknown, sentAt: string): DeliveryResult {
    const text = JSON.stringify(body);
    const bytes = new TextEncoder().encode(text).byteLength;
    if (bytes > INBOX_LIMITS.messageBytes) return { ok: false, reason: "too_large" };
    const held = this.sql
      .exec(
        "SELECT COUNT(*) AS messages, COALESCE(SUM(LENGTH(CAST(body AS BLOB))), 0) AS bytes FROM inbox WHERE recipient = ?",
        recipient,
      )
      .toArray()[0]!;
    if (Number(held.messages) + 1 > INBOX_LIMITS.messages)
      return { ok: false, reason: "full", detail: `${INBOX_LIMITS.messages} messages` };
    if (Number(held.bytes) + bytes > INBOX_LIMITS.bytes)
      return { ok: false, reason: "full", detail: `${INBOX_LIMITS.bytes} bytes` };
    this.sql.exec(
      "INSERT INTO inbox (recipient, sender, body, sent_at) VALUES (?, ?, ?, ?)",
      recipient,
      sender,
      text,
      sentAt,
    );
    return { ok: true };
  }

  /** Returns and removes every message waiting for `recipient`. */
  drain(recipient: string): Array<{ from: string; body: unknown; sentAt: string }> {
    const rows = this.sql
      .exec("SELECT id, sender, body, sent_at FROM inbox WHERE recipient = ? ORDER BY id", recipient)
      .toArray();
    this.clear(recipient);
    return rows.map((row) => ({
      from: String(row.sender),
      body: JSON.parse(String(row.body)),
      sentAt: String(row.sent_at),
    }));
  }

  clear(recipient: string): void {
    this.sql.exec("DELETE FROM inbox WHERE recipient = ?", recipient);
  }
}
