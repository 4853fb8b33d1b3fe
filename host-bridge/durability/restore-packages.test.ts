import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import type { InstallerContext } from "../install/install-dependencies";
import {
  dropPendingPackages,
  packagesHoldBack,
  pendingPackagesPath,
  readPendingPackages,
  reinstallPackages,
  writePendingPackages,
} from "./restore-packages";

describe("the packages a replace restore owes its apps", () => {
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "pc-restore-packages-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("an app on the list is held back packages_not_restored, naming the last failure; others are not", () => {
    writePendingPackages(home, [
      { name: "tool-a" },
      { name: "tool-b", failed: { code: "install_step_failed", reason: "the registry could not be reached" } },
    ]);
    expect(packagesHoldBack(home, "tool-a")?.code).toBe("packages_not_restored");
    expect(packagesHoldBack(home, "tool-b")?.message).toContain("install_step_failed");
    expect(packagesHoldBack(home, "tool-c")).toBeNull();
    dropPendingPackages(home, "tool-a");
    expect(packagesHoldBack(home, "tool-a")).toBeNull();
    dropPendingPackages(home, "tool-b");
    expect(existsSync(pendingPackagesPath(home))).toBe(false);
  });

  it("a list that cannot be read holds every app back rather than none", () => {
    writeFileSync(pendingPackagesPath(home), '{"version": 1, "apps": "everything"}');
    expect(readPendingPackages(home)).toBe("unreadable");
    expect(packagesHoldBack(home, "any-app")?.code).toBe("packages_not_restored");
  });

  it("a wheel whose bytes are not the ones pypi-closure.json pins is refused pypi_hash_mismatch before pip runs, and nothing is left installed", async () => {
    const appDir = join(home, "apps", "pinned-tool");
    mkdirSync(join(appDir, "wheels"), { recursive: true });
    mkdirSync(join(appDir, "venv", "bin"), { recursive: true }); // what a killed earlier attempt left
    const pinned = Buffer.from("the wheel the index served");
    writeFileSync(join(appDir, "wheels", "tool-1.0-py3-none-any.whl"), Buffer.from("a wheel swapped in the archive"));
    writeFileSync(
      join(appDir, "app.json"),
      JSON.stringify({
        name: "pinned-tool",
        version: "1.0.0",
        dependencies: { pythonDependencies: ["tool==1.0"] },
      }),
    );
    writeFileSync(
      join(appDir, "pypi-closure.json"),
      JSON.stringify({
        source: "pypi:tool==1.0",
        index: "https://pypi.org/simple",
        wheels: [
          {
            name: "tool",
            version: "1.0",
            file: "tool-1.0-py3-none-any.whl",
            url: "https://files.pythonhosted.org/tool-1.0-py3-none-any.whl",
            sha256: createHash("sha256").update(pinned).digest("hex"),
            size: pinned.length,
          },
        ],
      }),
    );
    // No installer may run: a context that would fail loudly if one did.
    const ctx = { parentEnv: {}, log: () => undefined } as unknown as InstallerContext;
    const refused = await reinstallPackages("pinned-tool", appDir, ctx).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).code).toBe("pypi_hash_mismatch");
    expect(existsSync(join(appDir, "venv"))).toBe(false);
  });
});
