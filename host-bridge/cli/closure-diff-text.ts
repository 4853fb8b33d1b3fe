// An update's change to a pinned npm closure in words for the terminal: the source and registry
// it moves between, the packages added and removed, the versions that change, the install
// scripts or native code it brings, and a re-pin of the same versions to other bytes. Package
// names and versions come from a registry: each goes through safeLine.
import { npmClosureDiff, NpmClosureReviewSchema } from "../../kernel/contracts/npm-closure";
import { safeLine } from "../../kernel/text/text-safety";

const MAX_LISTED = 50;

function listed(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).map((item) => safeLine(item));
  return items.length > MAX_LISTED ? `${shown.join(", ")} and ${items.length - MAX_LISTED} more` : shown.join(", ");
}

/** The lines of a `npmClosure` review change, or null when either side is not a closure review. */
export function closureDiffText(before: unknown, after: unknown): string | null {
  const old = NpmClosureReviewSchema.nullable().safeParse(before ?? null);
  const next = NpmClosureReviewSchema.nullable().safeParse(after ?? null);
  if (!old.success || !next.success) return null;
  const diff = npmClosureDiff(old.data, next.data);
  const text = (value: string | null) => safeLine(value ?? "none");
  const lines = [`  changed npm closure: ${text(diff.source.before)} -> ${text(diff.source.after)}`];
  if (diff.registry.before !== diff.registry.after)
    lines.push(`    registry: ${text(diff.registry.before)} -> ${text(diff.registry.after)}`);
  if (diff.added.length) lines.push(`    added: ${listed(diff.added)}`);
  if (diff.removed.length) lines.push(`    removed: ${listed(diff.removed)}`);
  if (diff.changed.length)
    lines.push(
      `    other versions: ${listed(diff.changed.map((c) => `${c.name} ${c.before.join(" ")} -> ${c.after.join(" ")}`))}`,
    );
  if (diff.newNative.length)
    lines.push(`    new install scripts or native build files (never run): ${listed(diff.newNative)}`);
  if (diff.repinned) lines.push("    the same versions pinned to other bytes (their integrity changed)");
  return `${lines.join("\n")}\n`;
}
