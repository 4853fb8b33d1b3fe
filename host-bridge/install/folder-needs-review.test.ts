// The folder needs an app declares are part of what the owner consents to: the review shows
// each inside review.permissions (and so the consent digest covers it), an app without needs
// keeps the review it had, and an update that adds a need or widens one to read-write asks
// for consent again.
import { describe, expect, it } from "vitest";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { buildReview } from "./review";
import { updateNeedsConsent } from "./update-app";

const clean = { verdict: "clean" as const, findings: [] };

function manifest(
  folders?: Array<{ name: string; why: string; access: "read" | "read-write"; hooks?: boolean }>,
): AppManifest {
  return AppManifestSchema.parse({
    name: "indexer",
    version: "1.0.0",
    ...(folders ? { permissions: { folders } } : {}),
  });
}

describe("folder needs in the review", () => {
  it("shows each need with its most access and reason under permissions, and nothing for an app without needs", () => {
    const review = buildReview(manifest([{ name: "documents", why: "indexes your notes", access: "read" }]), clean);
    expect(review.permissions.folders).toEqual(["documents (read): indexes your notes"]);
    expect("folders" in buildReview(manifest(), clean).permissions).toBe(false);
  });

  it("an update that adds a need, or widens one to read-write, asks for consent; the same needs do not", () => {
    const none = buildReview(manifest(), clean);
    const read = buildReview(manifest([{ name: "documents", why: "indexes your notes", access: "read" }]), clean);
    const wide = buildReview(manifest([{ name: "documents", why: "indexes your notes", access: "read-write" }]), clean);
    const added = updateNeedsConsent(none, read);
    expect(added.needed).toBe(true);
    expect(added.changes.map((c) => c.field)).toEqual(["permissions.folders"]);
    const widened = updateNeedsConsent(read, wide);
    expect(widened.needed).toBe(true);
    expect(widened.changes).toEqual([
      {
        field: "permissions.folders",
        before: ["documents (read): indexes your notes"],
        after: ["documents (read-write): indexes your notes"],
      },
    ]);
    expect(updateNeedsConsent(read, read)).toEqual({ needed: false, changes: [] });
  });

  it("a need whose folder the app's hooks share says so, and sharing it asks for consent again", () => {
    const need = { name: "documents", why: "indexes your notes", access: "read" as const };
    const kept = buildReview(manifest([need]), clean);
    const shared = buildReview(manifest([{ ...need, hooks: true }]), clean);
    expect(shared.permissions.folders).toEqual(["documents (read, its hooks too): indexes your notes"]);
    expect(updateNeedsConsent(kept, shared)).toEqual({
      needed: true,
      changes: [{ field: "permissions.folders", before: kept.permissions.folders, after: shared.permissions.folders }],
    });
  });
});
