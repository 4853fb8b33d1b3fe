import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NPM_FIXTURES, startNpmRegistry, tarballFile, type NpmRegistryStandIn } from "../../test/helpers/npm-registry";
import { closureLockfile } from "./npm-lockfile";
import { resolveNpmClosure } from "./npm-resolve";
import { refusal } from "../../test/helpers/refusals";

const MEMORY = "@modelcontextprotocol/server-memory";
const VERSION = "2025.8.4";

describe("resolving an npm package's closure from the owner's source", () => {
  let registry: NpmRegistryStandIn;
  beforeAll(async () => {
    registry = await startNpmRegistry();
  });
  afterAll(async () => {
    await registry.close();
  });

  it("pins server-memory and its whole closure, each package with the sha512 of the published tarball", async () => {
    const { closure } = await resolveNpmClosure({ registry: registry.url, name: MEMORY, version: VERSION });
    expect(closure.root).toEqual({ name: MEMORY, version: VERSION });
    expect(closure.packages.map((p) => `${p.name}@${p.version}`).sort()).toEqual(
      [
        "@modelcontextprotocol/sdk@1.0.1",
        `${MEMORY}@${VERSION}`,
        "bytes@3.1.2",
        "content-type@1.0.5",
        "depd@2.0.0",
        "http-errors@2.0.1",
        "iconv-lite@0.7.3",
        "inherits@2.0.4",
        "raw-body@3.0.2",
        "safer-buffer@2.1.2",
        "setprototypeof@1.2.0",
        "statuses@2.0.2",
        "toidentifier@1.0.1",
        "unpipe@1.0.0",
        "zod@3.25.76",
      ].sort(),
    );
    for (const pkg of closure.packages) {
      const bytes = readFileSync(join(NPM_FIXTURES, "tarballs", tarballFile(pkg.name, pkg.version)));
      expect(pkg.integrity).toBe(`sha512-${createHash("sha512").update(bytes).digest("base64")}`);
      expect(pkg.size).toBe(bytes.length);
      expect(pkg.path).toBe(`node_modules/${pkg.name}`);
      expect(pkg.resolved.startsWith(`${registry.url}/`)).toBe(true);
    }
    const lock = JSON.parse(closureLockfile(closure));
    expect(lock.lockfileVersion).toBe(3);
    expect(lock.packages[`node_modules/${MEMORY}`].integrity).toBe(
      closure.packages.find((p) => p.name === MEMORY)!.integrity,
    );
  });

  it("places an npm: alias under the alias's folder and installs a peer where its package finds it (server-filesystem)", async () => {
    const FILESYSTEM = "@modelcontextprotocol/server-filesystem";
    const { closure } = await resolveNpmClosure({ registry: registry.url, name: FILESYSTEM, version: "2025.3.28" });
    const at = (path: string) => closure.packages.find((p) => p.path === path);
    // @isaacs/cliui depends on "string-width-cjs": "npm:string-width@^4.2.0", and two more such aliases.
    for (const [folder, name, major] of [
      ["string-width-cjs", "string-width", "4."],
      ["strip-ansi-cjs", "strip-ansi", "6."],
      ["wrap-ansi-cjs", "wrap-ansi", "7."],
    ] as const) {
      const aliased = closure.packages.find((p) => p.path.endsWith(`node_modules/${folder}`));
      expect(aliased, folder).toMatchObject({ name, alias: true });
      expect(aliased!.version.startsWith(major)).toBe(true);
    }
    // zod-to-json-schema names zod as a peer: a zod its range accepts is where it looks.
    expect(at("node_modules/zod-to-json-schema")!.peerDependencies).toEqual({ zod: "^3.25.28 || ^4" });
    expect(at("node_modules/zod")!.version).toBe("3.25.76");
    for (const pkg of closure.packages) {
      const bytes = readFileSync(join(NPM_FIXTURES, "tarballs", tarballFile(pkg.name, pkg.version)));
      expect(pkg.integrity).toBe(`sha512-${createHash("sha512").update(bytes).digest("base64")}`);
    }
    const lock = JSON.parse(closureLockfile(closure));
    expect(lock.packages["node_modules/string-width-cjs"].name).toBe("string-width");
    expect(lock.packages["node_modules/string-width"].name).toBeUndefined();
    expect(lock.packages["node_modules/zod-to-json-schema"].peerDependencies).toEqual({ zod: "^3.25.28 || ^4" });
  });

  it("resolving the same source twice gives the same closure byte for byte", async () => {
    const a = await resolveNpmClosure({ registry: registry.url, name: MEMORY, version: VERSION });
    const b = await resolveNpmClosure({ registry: registry.url, name: MEMORY, version: VERSION });
    expect(JSON.stringify(a.closure)).toBe(JSON.stringify(b.closure));
  });

  it("a tarball one byte off its published integrity is refused with a code naming the package", async () => {
    registry.tamper("raw-body", "3.0.2");
    try {
      const error = await refusal(resolveNpmClosure({ registry: registry.url, name: MEMORY, version: VERSION }));
      expect(error.code).toBe("npm_integrity_mismatch");
      expect(error.message).toContain("raw-body@3.0.2");
    } finally {
      registry.restore("raw-body", "3.0.2");
    }
  });

  it("a version the source does not have, and a package it does not have, are refused by name", async () => {
    expect((await refusal(resolveNpmClosure({ registry: registry.url, name: MEMORY, version: "9.9.9" }))).code).toBe(
      "npm_version_not_found",
    );
    expect(
      (await refusal(resolveNpmClosure({ registry: registry.url, name: "no-such-package", version: "1.0.0" }))).code,
    ).toBe("npm_package_not_found");
  });

  it("a name that resolves to a loopback address is never dialled: only a literal the owner named as the source is", async () => {
    const port = new URL(registry.url).port;
    const before = registry.requests.length;
    // The owner named a public host; its DNS answers with this machine's loopback (rebinding).
    const refused = await refusal(
      resolveNpmClosure({
        registry: `http://mirror.example.com:${port}`,
        name: MEMORY,
        version: VERSION,
        resolve: async () => ["127.0.0.2"],
      }),
    );
    expect(refused.code).toBe("source_address_refused");
    expect(refused.message).toContain("127.0.0.2");
    expect(registry.requests.length).toBe(before);
  });
});
