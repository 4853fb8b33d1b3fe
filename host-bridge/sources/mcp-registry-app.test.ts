// An MCP Registry entry becomes the generated app of the package it names, through the same
// path as `npm:`: its variables become --env values the owner gives or write-only secrets, what it
// needs and was not given is refused by name, and the review says where the entry came from —
// "official" only for the official registry's URL, never because an entry or a registry says so,
// and only for a folder `apps add` generated itself.
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { MCP_REGISTRY_ENTRY_FILE, OFFICIAL_MCP_REGISTRY } from "../../kernel/contracts/mcp-registry";
import { registryFixture, startMcpRegistry, type McpRegistryStandIn } from "../../test/helpers/mcp-registry";
import { packMcpb } from "../../test/helpers/mcpb-pack";
import { startNpmRegistry, type NpmRegistryStandIn } from "../../test/helpers/npm-registry";
import { previewBundle } from "../install/preview";
import { generateRegistryApp, planRegistrySettings } from "./mcp-registry-app";
import { choosePackage } from "./mcp-registry-resolve";
import { NO_CHOICES, writeGeneratedApp } from "./npm-app";
import { thrown } from "../../test/helpers/refusals";

const MEMORY = "io.github.modelcontextprotocol/server-memory";

/** server-memory's entry with its package's variables and arguments replaced. */
function serverWith(extra: Record<string, unknown>) {
  const entry = registryFixture("server-memory.json");
  const listed = (entry.server.packages as Array<Record<string, unknown>>)[0]!;
  return { ...entry.server, packages: [{ ...listed, ...extra }] } as never;
}

const variables = [
  { name: "API_TOKEN", description: "The service's token", isSecret: true, isRequired: true },
  { name: "REGION", description: "Where the service runs", isRequired: true, default: "eu" },
  { name: "LOG_LEVEL", isRequired: false },
  { name: "MODE", value: "stdio", description: "fixed by the entry" },
];

describe("an entry's variables in the generated app", () => {
  it("a required variable the owner did not give is mcp_registry_setting_required, naming it and its example", () => {
    const server = serverWith({ environmentVariables: variables });
    const error = thrown(() => planRegistrySettings(server, choosePackage(server), [], false));
    expect(error.code).toBe("mcp_registry_setting_required");
    expect(error.message).toContain("REGION (Where the service runs, for example eu)");
    // A secret is never asked for on the command line, and an optional one is not required.
    expect(error.message).not.toContain("API_TOKEN");
    expect(error.message).not.toContain("LOG_LEVEL");
  });

  it("a secret becomes a declared secret, a fixed value is set unless the owner gives another, and each is listed", () => {
    const server = serverWith({ environmentVariables: variables });
    const plan = planRegistrySettings(server, choosePackage(server), [["REGION", "us"]], false);
    expect(plan.secrets).toEqual([{ name: "API_TOKEN", why: "The service's token" }]);
    expect(plan.env).toEqual([
      ["REGION", "us"],
      ["MODE", "stdio"],
    ]);
    expect(plan.settings.map((s) => [s.name, s.secret, s.set])).toEqual([
      ["API_TOKEN", true, false],
      ["REGION", false, true],
      ["LOG_LEVEL", false, false],
      ["MODE", false, true],
    ]);
    const overridden = planRegistrySettings(
      server,
      choosePackage(server),
      [
        ["REGION", "us"],
        ["MODE", "x"],
      ],
      false,
    );
    expect(overridden.env).toEqual([
      ["REGION", "us"],
      ["MODE", "x"],
    ]);
  });

  it("a secret given with --env is refused: app.json would hold it in clear", () => {
    const server = serverWith({ environmentVariables: variables });
    const error = thrown(() =>
      planRegistrySettings(
        server,
        choosePackage(server),
        [
          ["REGION", "us"],
          ["API_TOKEN", "s3cret"],
        ],
        false,
      ),
    );
    expect(error.code).toBe("mcp_registry_entry_unusable");
    expect(error.message).toContain("API_TOKEN is a secret");
    expect(error.message).not.toContain("s3cret");
  });

  it("a package that needs arguments is refused unless the owner gives them", () => {
    const server = serverWith({
      packageArguments: [{ type: "positional", valueHint: "allowed_directory", isRequired: true }],
    });
    const error = thrown(() => planRegistrySettings(server, choosePackage(server), [], false));
    expect(error.code).toBe("mcp_registry_entry_unusable");
    expect(error.message).toContain("allowed_directory");
    expect(planRegistrySettings(server, choosePackage(server), [], true).env).toEqual([]);
  });
});

describe("generating and reviewing the app of a registry entry", () => {
  let scratch: string;
  let npm: NpmRegistryStandIn;
  let registry: McpRegistryStandIn;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "pc-registry-app-"));
    npm = await startNpmRegistry();
    const entry = registryFixture("server-memory.json");
    const listed = (entry.server.packages as Array<Record<string, unknown>>)[0]!;
    listed.environmentVariables = [
      ...(listed.environmentVariables as unknown[]),
      { name: "MEMORY_API_KEY", description: "A key it never needs", isSecret: true },
    ];
    registry = await startMcpRegistry({ entries: [entry] });
  });
  afterAll(async () => {
    await npm.close();
    await registry.close();
    await rm(scratch, { recursive: true, force: true });
  });

  const install = () => ({
    npm_registry: npm.url,
    pypi_index: "https://pypi.org/simple/",
    mcp_registries: [registry.url],
  });
  const quarantine = () => join(scratch, "quarantine");
  const preview = (folder: string) =>
    previewBundle(folder, {
      quarantineRoot: quarantine(),
      reservedNames: new Set(),
      core: { version: "0.1.0", features: [] },
    });

  it("is the npm package's app, with the entry's secret declared and where it came from recorded", async () => {
    const choices = { ...NO_CHOICES, env: [["MEMORY_FILE_PATH", "${DATA}/memory.jsonl"]] as Array<[string, string]> };
    const app = await generateRegistryApp(install(), { name: MEMORY, version: null }, choices);
    expect(app.name).toBe("server-memory");
    expect(app.manifest.secrets).toEqual([{ name: "MEMORY_API_KEY", why: "A key it never needs" }]);
    const server = (app.manifest.mcpServers as Record<string, { env: Record<string, string> }>)["server-memory"]!;
    expect(server.env.MEMORY_FILE_PATH).toBe("${DATA}/memory.jsonl");
    // The server holds the secret by reference: its value is never in app.json.
    expect(server.env.MEMORY_API_KEY).toBe("${secret:MEMORY_API_KEY}");
    expect(JSON.parse(String(app.files[MCP_REGISTRY_ENTRY_FILE]))).toMatchObject({
      registry: registry.url,
      name: MEMORY,
      version: "2025.8.4",
      package: "npm:@modelcontextprotocol/server-memory@2025.8.4",
    });

    const previewed = await preview(await writeGeneratedApp(quarantine(), app));
    if (!previewed.ok) throw new Error(`${previewed.code}: ${previewed.message}`);
    // The stand-in's answer carries the official registry's _meta block: it changes nothing.
    expect(previewed.review.mcpRegistryEntry).toMatchObject({
      registry: registry.url,
      official: false,
      name: MEMORY,
      namespace: "io.github.modelcontextprotocol",
      version: "2025.8.4",
      package: "npm:@modelcontextprotocol/server-memory@2025.8.4",
    });
    expect(previewed.review.mcpRegistryEntry!.settings.map((s) => [s.name, s.secret, s.set])).toEqual([
      ["MEMORY_FILE_PATH", false, true],
      ["MEMORY_API_KEY", true, false],
    ]);
    expect(previewed.review.npmClosure?.source).toBe("npm:@modelcontextprotocol/server-memory@2025.8.4");
    expect(previewed.review.secrets.map((s) => s.name)).toEqual(["MEMORY_API_KEY"]);
  });

  it("'official' is the official registry's URL alone, and only a folder apps add generated is read for it", async () => {
    const app = await generateRegistryApp(install(), { name: MEMORY, version: "2025.8.4" }, NO_CHOICES);
    const generated = await writeGeneratedApp(quarantine(), app);
    const record = JSON.parse(await readFile(join(generated, MCP_REGISTRY_ENTRY_FILE), "utf8"));
    await writeFile(
      join(generated, MCP_REGISTRY_ENTRY_FILE),
      JSON.stringify({ ...record, registry: `${OFFICIAL_MCP_REGISTRY}/` }),
    );
    const official = await preview(generated);
    if (!official.ok) throw new Error(official.message);
    expect(official.review.mcpRegistryEntry).toMatchObject({ registry: `${OFFICIAL_MCP_REGISTRY}/`, official: true });

    // The same bytes in a folder of the owner's own: the record is a file like any other.
    const elsewhere = join(scratch, "downloaded-app");
    await cp(generated, elsewhere, { recursive: true });
    const claimed = await preview(elsewhere);
    if (!claimed.ok) throw new Error(claimed.message);
    expect(claimed.review.mcpRegistryEntry).toBeUndefined();
    expect(claimed.digest).not.toBe(official.digest);
  });

  it("a generated folder whose record does not parse is refused, never reviewed without it", async () => {
    const app = await generateRegistryApp(install(), { name: MEMORY, version: null }, NO_CHOICES);
    const generated = await writeGeneratedApp(quarantine(), app);
    await writeFile(join(generated, MCP_REGISTRY_ENTRY_FILE), JSON.stringify({ registry: "not a url" }));
    const refused = await preview(generated);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.code).toBe("mcp_registry_entry_file_invalid");
  });

  describe("an entry published as an .mcpb bundle", () => {
    const bundle = packMcpb(
      {
        manifest_version: "0.3",
        name: "notes-server",
        version: "1.2.0",
        description: "Keeps notes",
        author: { name: "Ada Example" },
        server: {
          type: "node",
          entry_point: "server/index.js",
          mcp_config: { command: "node", args: ["${__dirname}/server/index.js"] },
        },
      },
      { "server/index.js": { data: "console.log('notes');\n" } },
    );
    const sha256 = createHash("sha256").update(bundle).digest("hex");
    const publishBundleEntry = (name: string, url: string, fileSha256: string) =>
      registry.publish({
        server: {
          name,
          version: "1.2.0",
          description: "Keeps notes",
          packages: [
            { registryType: "mcpb", identifier: url, version: "1.2.0", fileSha256, transport: { type: "stdio" } },
          ],
        },
      });

    it("is handed over to the .mcpb form: the bundle is fetched, checked against fileSha256 and reviewed with its origin", async () => {
      registry.answerWith("/bundles/notes.mcpb", 200, bundle);
      publishBundleEntry("io.github.someone/notes", `${registry.url}/bundles/notes.mcpb`, sha256);
      const app = await generateRegistryApp(install(), { name: "io.github.someone/notes", version: null }, NO_CHOICES);
      expect(app.name).toBe("notes-server");
      expect(Object.keys(app.files)).toEqual(
        expect.arrayContaining(["server/index.js", "mcpb-bundle.json", MCP_REGISTRY_ENTRY_FILE]),
      );
      const previewed = await preview(await writeGeneratedApp(quarantine(), app));
      if (!previewed.ok) throw new Error(`${previewed.code}: ${previewed.message}`);
      expect(previewed.review.mcpbBundle).toMatchObject({ sha256, source: `${registry.url}/bundles/notes.mcpb` });
      expect(previewed.review.mcpRegistryEntry).toMatchObject({
        name: "io.github.someone/notes",
        package: `.mcpb ${registry.url}/bundles/notes.mcpb (sha256 ${sha256})`,
      });
    });

    it("a bundle whose bytes are not the entry's fileSha256 is mcp_registry_bundle_mismatch", async () => {
      registry.answerWith("/bundles/changed.mcpb", 200, Buffer.concat([bundle, Buffer.from(" ")]));
      publishBundleEntry("io.github.someone/changed", `${registry.url}/bundles/changed.mcpb`, sha256);
      const error = await generateRegistryApp(
        install(),
        { name: "io.github.someone/changed", version: null },
        NO_CHOICES,
      ).then(
        () => null,
        (e: unknown) => e as GatewayError,
      );
      expect(error?.code).toBe("mcp_registry_bundle_mismatch");
      expect(error?.message).toContain(sha256);
    });

    it("a bundle on a local address the owner did not name is never fetched", async () => {
      const before = npm.requests.length;
      publishBundleEntry("io.github.someone/local", `${npm.url}/bundles/notes.mcpb`, sha256);
      const error = await generateRegistryApp(
        install(),
        { name: "io.github.someone/local", version: null },
        NO_CHOICES,
      ).then(
        () => null,
        (e: unknown) => e as GatewayError,
      );
      expect(error?.code).toBe("source_address_refused");
      expect(npm.requests.length).toBe(before);
    });
  });
});
