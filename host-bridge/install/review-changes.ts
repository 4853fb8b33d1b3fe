// What an update changes in the disclosure the owner consented to (UPD-02): every part of the
// review that grants or runs something — prerequisites, each permission (network hosts
// included), jobs, packages, the registry entry an app came from, UI, backend, hooks, MCP
// servers, launches, writes, the secrets it asks for and the scan's findings. The app's name, version, wording and the parked-data note are not disclosure.
import type { InstallReview, ReviewChange } from "../../kernel/contracts/install-review";

const DISCLOSURE_FIELDS = [
  "prerequisites",
  "scheduledJobs",
  "pythonPackages",
  "npmPackages",
  "npmClosure",
  "mcpRegistryEntry",
  "ui",
  "backend",
  "installHook",
  "uninstallHook",
  "mcpServers",
  "launches",
  "writes",
  "secrets",
  "findings",
  "mcpbBundle",
] as const;

/** JSON with object keys sorted, so two equal values always compare equal. */
function canonical(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
          )
        : v,
    ) ?? "null"
  );
}

/** Each disclosure field whose value differs between the consented review and the new one; everything when there is no consented review. */
export function reviewChanges(before: InstallReview | null, after: InstallReview): ReviewChange[] {
  const changes: ReviewChange[] = [];
  const compare = (field: string, a: unknown, b: unknown) => {
    if (canonical(a) !== canonical(b)) changes.push({ field, before: a ?? null, after: b ?? null });
  };
  const permissionKeys = new Set([...Object.keys(before?.permissions ?? {}), ...Object.keys(after.permissions)]);
  for (const key of [...permissionKeys].sort()) {
    compare(
      `permissions.${key}`,
      (before?.permissions as Record<string, unknown> | undefined)?.[key],
      (after.permissions as Record<string, unknown>)[key],
    );
  }
  for (const field of DISCLOSURE_FIELDS) compare(field, before?.[field], after[field]);
  return changes;
}
