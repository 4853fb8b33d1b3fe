// An update of an app that pins an npm closure asks consent whenever the closure changes, a
// re-pin of the same versions to other bytes included, and the diff says what changed. The
// reviews are built by the bridge's own buildReview, as a preview builds them.
import { describe, expect, it } from "vitest";
import { npmClosureDiff, type NpmClosure } from "../../kernel/contracts/npm-closure";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { buildReview } from "./review";
import { updateNeedsConsent } from "./update-app";

const manifest = AppManifestSchema.parse({
  name: "probe-closure",
  version: "1.0.0",
  permissions: { storage: true },
  dependencies: { npmClosure: true },
  mcpServers: { main: { command: "node", args: ["node_modules/probe-root/index.js"] } },
});

const INTEGRITY_A = `sha512-${"A".repeat(86)}==`;
const INTEGRITY_B = `sha512-${"B".repeat(86)}==`;

function closure(packages: Array<[name: string, version: string, integrity: string, native?: boolean]>): NpmClosure {
  const registry = "http://127.0.0.2:4873";
  return {
    registry,
    root: { name: "probe-root", version: packages[0]![1] },
    packages: packages.map(([name, version, integrity, native]) => ({
      path: `node_modules/${name}`,
      name,
      version,
      resolved: `${registry}/-/tarballs/${name}-${version}.tgz`,
      integrity,
      size: 100,
      native: native === true,
    })),
  };
}

const review = (c: NpmClosure) => buildReview(manifest, { verdict: "clean", findings: [] }, 60, null, c);

describe("an update of a pinned npm closure", () => {
  const installed = closure([
    ["probe-root", "1.0.0", INTEGRITY_A],
    ["left-pad", "1.0.0", INTEGRITY_A],
  ]);

  it("the same closure needs no consent", () => {
    expect(updateNeedsConsent(review(installed), review(installed)).needed).toBe(false);
  });

  it("the same versions pinned to other bytes need consent, and the diff says they were re-pinned", () => {
    const repinned = closure([
      ["probe-root", "1.0.0", INTEGRITY_A],
      ["left-pad", "1.0.0", INTEGRITY_B],
    ]);
    const { needed, changes } = updateNeedsConsent(review(installed), review(repinned));
    expect(needed).toBe(true);
    expect(changes.map((c) => c.field)).toEqual(["npmClosure"]);
    const diff = npmClosureDiff(review(installed).npmClosure, review(repinned).npmClosure);
    expect(diff).toMatchObject({ added: [], removed: [], changed: [], newNative: [], repinned: true });
  });

  it("a new release lists added, removed and changed packages and its new install scripts", () => {
    const next = closure([
      ["probe-root", "1.1.0", INTEGRITY_B],
      ["native-thing", "2.0.0", INTEGRITY_B, true],
    ]);
    expect(updateNeedsConsent(review(installed), review(next)).needed).toBe(true);
    const diff = npmClosureDiff(review(installed).npmClosure, review(next).npmClosure);
    expect(diff).toEqual({
      source: { before: "npm:probe-root@1.0.0", after: "npm:probe-root@1.1.0" },
      registry: { before: "http://127.0.0.2:4873", after: "http://127.0.0.2:4873" },
      added: ["native-thing@2.0.0"],
      removed: ["left-pad@1.0.0"],
      changed: [{ name: "probe-root", before: ["1.0.0"], after: ["1.1.0"] }],
      newNative: ["native-thing@2.0.0"],
      repinned: false,
    });
  });
});
