import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { validateManifest, type ValidateManifestOptions } from "../kernel/contracts/manifest";
import { repoRoot } from "../test/helpers/gateway";
import { appJsonSchema } from "./render-app-schema";

const opts: ValidateManifestOptions = {
  reservedNames: new Set<string>(),
  fromNativeFolder: false,
  core: { version: "99.0.0", features: [] },
};
const published = () => JSON.parse(readFileSync(join(repoRoot, "docs", "app.schema.json"), "utf8")) as object;
// ajv in strict mode: a keyword JSON Schema does not know, or a schema it cannot read, throws here.
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(published());
const readJson = (...parts: string[]) =>
  JSON.parse(readFileSync(join(repoRoot, ...parts), "utf8")) as Record<string, unknown>;

/** The app.json of every example app, and of the test apps whose folders hold one. */
function fixtureManifests(): Array<[string, Record<string, unknown>]> {
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const base of ["apps/fixtures", "test/fixtures/backend-apps"]) {
    for (const name of readdirSync(join(repoRoot, base))) {
      try {
        out.push([`${base}/${name}`, readJson(base, name, "app.json")]);
      } catch {
        // not an app folder
      }
    }
  }
  return out;
}

describe("docs/app.schema.json", () => {
  it("equals a fresh render of the manifest schema", () => {
    expect(readFileSync(join(repoRoot, "docs", "app.schema.json"), "utf8")).toBe(
      `${JSON.stringify(appJsonSchema(), null, 2)}\n`,
    );
  });

  it("accepts every fixture app.json the gateway accepts", () => {
    const fixtures = fixtureManifests();
    expect(fixtures.length).toBeGreaterThan(10);
    const accepted = fixtures.filter(([, manifest]) => validateManifest(manifest, opts).ok);
    expect(accepted.map(([folder]) => folder)).toContain("test/fixtures/backend-apps/secret-user");
    for (const [folder, manifest] of accepted) {
      expect({ folder, valid: validate(manifest), errors: validate.errors ?? null }).toEqual({
        folder,
        valid: true,
        errors: null,
      });
    }
  });

  it("refuses a misspelt top-level key, which the gateway keeps and accepts", () => {
    // "descripton" for "description": what an author's fingers write.
    const typo = { ...readJson("test/fixtures/backend-apps/secret-user/app.json"), descripton: "Uses a secret." };
    expect(validate(typo)).toBe(false);
    expect(validate.errors).toContainEqual(
      expect.objectContaining({ keyword: "additionalProperties", params: { additionalProperty: "descripton" } }),
    );
    const gateway = validateManifest(typo, opts);
    expect(gateway.ok && (gateway.manifest as Record<string, unknown>).descripton).toBe("Uses a secret.");
  });

  it('lets an author name the schema with "$schema": the editor and the gateway both accept it', () => {
    const manifest = { $schema: "../../docs/app.schema.json", ...readJson("apps/fixtures/node-notes/app.json") };
    expect(validate(manifest)).toBe(true);
    const gateway = validateManifest(manifest, opts);
    expect(gateway.ok).toBe(true);
    expect(validateManifest({ ...manifest, $schema: 7 }, opts).ok).toBe(false);
  });
});
