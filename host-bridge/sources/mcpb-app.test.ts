import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { McpbBundleRecordSchema } from "../../kernel/contracts/mcpb-bundle";
import { validateManifest } from "../../kernel/contracts/manifest";
import { appendSignatureBlock, packMcpb, type PackedFile } from "../../test/helpers/mcpb-pack";
import { generateMcpbApp } from "./mcpb-app";
import { refusal } from "../../test/helpers/refusals";

const SERVER_FILES: Record<string, PackedFile> = {
  "server/index.js": { data: "import 'a';\n" },
  "node_modules/a/package.json": { data: '{"name":"a","main":"index.js"}' },
  "node_modules/a/index.js": { data: "module.exports = 1;\n" },
};

function manifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    manifest_version: "0.3",
    name: "Notes Server",
    display_name: "Notes",
    version: "1.2.0",
    description: "Keeps notes",
    author: { name: "Ada Example", email: "ada@example.com" },
    server: {
      type: "node",
      entry_point: "server/index.js",
      mcp_config: {
        command: "node",
        args: ["${__dirname}/server/index.js"],
        env: { NOTES_DIR: "${HOME}/notes", LIB: "${__dirname}/lib" },
      },
    },
    compatibility: { claude_desktop: ">=0.10.0", platforms: ["darwin", "linux"], runtimes: { node: ">=18" } },
    ...overrides,
  };
}

async function generate(m: Record<string, unknown>, files = SERVER_FILES, env: Array<[string, string]> = []) {
  const bytes = packMcpb(m, files);
  return { bytes, app: await generateMcpbApp({ source: "./notes.mcpb", bytes }, { env }) };
}

type Server = { command: string; args: string[]; env: Record<string, string> };
const serverOf = (app: { manifest: Record<string, unknown> }) =>
  Object.values(app.manifest.mcpServers as Record<string, Server>)[0]!;

describe("an .mcpb bundle becomes an ordinary app", () => {
  it("its server runs from the app folder, HOME and XDG_* inside data/, no network, and the app validates", async () => {
    const { app } = await generate(manifest(), SERVER_FILES, [["EXTRA", "${DATA}/x"]]);
    expect(app.name).toBe("notes-server");
    const server = serverOf(app);
    expect(server.command).toBe("node");
    expect(server.args).toEqual(["./server/index.js"]);
    expect(server.env).toMatchObject({
      HOME: "${DATA}",
      XDG_DATA_HOME: "${DATA}/.local/share",
      NOTES_DIR: "${DATA}/notes",
      LIB: "./lib",
      EXTRA: "${DATA}/x",
    });
    expect(app.manifest.permissions).toEqual({ storage: true, network: false });
    expect(Object.keys(app.files)).toEqual(
      expect.arrayContaining(["app.json", "mcpb-bundle.json", "manifest.json", "node_modules/a/index.js"]),
    );
    const validated = validateManifest(JSON.parse(String(app.files["app.json"])), {
      reservedNames: new Set(),
      fromNativeFolder: false,
      core: { version: "0.3.0", features: [] },
    });
    expect(validated.ok).toBe(true);
  });

  it("pins the bundle's sha256 and records author, version, compatibility and signature state", async () => {
    const { bytes, app } = await generate(manifest());
    const record = McpbBundleRecordSchema.parse(JSON.parse(String(app.files["mcpb-bundle.json"])));
    expect(record.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(record).toMatchObject({
      source: "./notes.mcpb",
      bytes: bytes.length,
      manifestVersion: "0.3",
      version: "1.2.0",
      author: "Ada Example <ada@example.com>",
      serverType: "node",
      signature: "unsigned",
    });
    expect(record.compatibility).toEqual([
      'claude_desktop: ">=0.10.0"',
      "platforms: darwin, linux",
      "runtimes.node: >=18",
    ]);
  });

  it("maps user_config: a directory to a folder need, a default to its value, a sensitive env field to a secret", async () => {
    const { app } = await generate(
      manifest({
        server: {
          type: "node",
          entry_point: "server/index.js",
          mcp_config: {
            command: "node",
            args: ["${__dirname}/server/index.js", "${user_config.roots}", "--limit=${user_config.limit}"],
            env: { API_KEY: "${user_config.api_key}", VERBOSE: "${user_config.verbose}" },
          },
        },
        user_config: {
          roots: { type: "directory", title: "Roots", description: "Folders it may read", multiple: true },
          limit: { type: "number", title: "Limit", description: "Most results", default: 10 },
          verbose: { type: "boolean", title: "Verbose", description: "Log more", default: false },
          api_key: { type: "string", title: "API key", description: "Optional key", sensitive: true },
          unused: { type: "string", title: "Unused", description: "Not named" },
        },
      }),
    );
    const server = serverOf(app);
    expect(server.args).toEqual(["./server/index.js", "/folders/roots", "--limit=10"]);
    expect(server.env.VERBOSE).toBe("false");
    expect(server.env.API_KEY).toBe("${secret:API_KEY}");
    expect(app.manifest.secrets).toEqual([{ name: "API_KEY", why: "API key: Optional key" }]);
    expect((app.manifest.permissions as { folders: unknown }).folders).toEqual([
      { name: "roots", why: "Roots: Folders it may read", access: "read-write" },
    ]);
    const uses = Object.fromEntries(app.record.userConfig.map((u) => [u.key, u.becomes]));
    expect(uses.api_key).toContain("the secret API_KEY (in API_KEY)");
    expect(uses.api_key).toContain("personalclaw secrets set API_KEY");
    expect(uses.unused).toContain("not used");
    expect(uses.roots).toContain("/folders/roots");
  });

  it("a required sensitive field named as a whole env value becomes a secret, its value in no file of the app", async () => {
    const { app } = await generate(
      manifest({
        server: {
          type: "node",
          entry_point: "server/index.js",
          mcp_config: { command: "node", args: ["server/index.js"], env: { BRAVE_KEY: "${user_config.brave-key}" } },
        },
        user_config: {
          "brave-key": { type: "string", title: "Brave key", description: "Your key", sensitive: true, required: true },
        },
      }),
    );
    expect(serverOf(app).env.BRAVE_KEY).toBe("${secret:BRAVE_KEY}");
    expect(app.manifest.secrets).toEqual([{ name: "BRAVE_KEY", why: "Brave key: Your key" }]);
    const validated = validateManifest(JSON.parse(String(app.files["app.json"])), {
      reservedNames: new Set(),
      fromNativeFolder: false,
      core: { version: "0.3.0", features: [] },
    });
    expect(validated.ok).toBe(true);
  });

  it("--user-config sets a non-sensitive field; a sensitive one given so is refused, pointing at secrets set", async () => {
    const m = manifest({
      server: {
        type: "node",
        entry_point: "server/index.js",
        mcp_config: {
          command: "node",
          args: ["server/index.js", "--limit=${user_config.limit}", "--name=${user_config.name}"],
          env: { TOKEN: "${user_config.token}" },
        },
      },
      user_config: {
        limit: { type: "number", title: "Limit", description: "d", default: 10, min: 1, max: 50 },
        name: { type: "string", title: "Name", description: "d", required: true },
        token: { type: "string", title: "Token", description: "d", sensitive: true },
      },
    });
    const bytes = packMcpb(m, SERVER_FILES);
    const add = (userConfig: Array<[string, string]>) =>
      generateMcpbApp({ source: "./notes.mcpb", bytes }, { env: [], userConfig });
    const app = await add([
      ["limit", "20"],
      ["name", "ada"],
    ]);
    expect(serverOf(app).args).toEqual(["server/index.js", "--limit=20", "--name=ada"]);
    expect(app.record.userConfig.find((u) => u.key === "name")!.becomes).toContain("given with --user-config");
    const sensitive = await refusal(
      add([
        ["name", "ada"],
        ["token", "s3cr3t-on-the-line"],
      ]),
    );
    expect(sensitive.code).toBe("mcpb_user_config_sensitive");
    expect(sensitive.message).toContain("personalclaw secrets set TOKEN");
    expect(sensitive.message).not.toContain("s3cr3t-on-the-line");
    for (const given of [[["limit", "99"]], [["limit", "ten"]], [["nope", "1"]], []] as Array<Array<[string, string]>>)
      expect((await refusal(add(given))).code).toBe("mcpb_user_config_refused");
  });

  it("a signature block that is not a signature of the bundle is refused with mcpb_signature_invalid", async () => {
    const bytes = appendSignatureBlock(packMcpb(manifest(), SERVER_FILES), Buffer.from("not PKCS#7 at all"));
    const error = await refusal(generateMcpbApp({ source: "./notes.mcpb", bytes }, { env: [] }));
    expect(error.code).toBe("mcpb_signature_invalid");
    expect(error.message).toContain("not readable PKCS#7");
  });

  it("refuses what a confined server cannot be given, naming the field", async () => {
    const withField = (field: Record<string, unknown>) =>
      manifest({
        server: {
          type: "node",
          entry_point: "server/index.js",
          mcp_config: { command: "node", args: ["server/index.js", "${user_config.f}"] },
        },
        user_config: { f: { title: "F", description: "d", ...field } },
      });
    for (const field of [
      { type: "file" },
      { type: "string", sensitive: true, required: true },
      { type: "string", required: true },
    ]) {
      const error = await refusal(generate(withField(field)));
      expect(error.code).toBe("mcpb_user_config_refused");
      expect(error.message).toContain("'f'");
    }
  });

  it("an unknown manifest_version, or none, is refused with mcpb_manifest_version_unsupported", async () => {
    expect((await refusal(generate(manifest({ manifest_version: "9.9" })))).code).toBe(
      "mcpb_manifest_version_unsupported",
    );
    expect((await refusal(generate(manifest({ manifest_version: undefined })))).code).toBe(
      "mcpb_manifest_version_unsupported",
    );
  });

  it("reads 0.4 with a node server and refuses its experimental uv type", async () => {
    const { app } = await generate(manifest({ manifest_version: "0.4" }));
    expect(app.record.manifestVersion).toBe("0.4");
    const uv = manifest({ manifest_version: "0.4", server: { type: "uv", entry_point: "server/index.js" } });
    expect((await refusal(generate(uv))).code).toBe("mcpb_manifest_invalid");
  });

  it("refuses a bundle that declares no Linux, an entry point it lacks, or a file where the app's own goes", async () => {
    expect((await refusal(generate(manifest({ compatibility: { platforms: ["darwin"] } })))).code).toBe(
      "mcpb_manifest_invalid",
    );
    const noEntry = { ...SERVER_FILES };
    delete noEntry["server/index.js"];
    expect((await refusal(generate(manifest(), noEntry))).code).toBe("mcpb_manifest_invalid");
    for (const path of ["app.json", "data/state.json", "mcpb-bundle.json"]) {
      const error = await refusal(generate(manifest(), { ...SERVER_FILES, [path]: { data: "{}" } }));
      expect(error.code).toBe("mcpb_entry_refused");
    }
  });

  it("a binary server runs its program from the app folder, marked executable even from a zip without modes", async () => {
    const { app } = await generate(
      manifest({
        server: { type: "binary", entry_point: "bin/server", mcp_config: { command: "${__dirname}/bin/server" } },
      }),
      { "bin/server": { data: "\x7fELF" } },
    );
    expect(serverOf(app).command).toBe("./bin/server");
    expect(app.executables).toEqual(["bin/server"]);
  });

  it("a Python server runs python3 and names Python as a prerequisite", async () => {
    const { app } = await generate(
      manifest({
        server: {
          type: "python",
          entry_point: "server/main.py",
          mcp_config: {
            command: "python",
            args: ["${__dirname}/server/main.py"],
            env: { PYTHONPATH: "${__dirname}/server/lib" },
          },
        },
      }),
      { "server/main.py": { data: "print(1)\n" } },
    );
    expect(serverOf(app)).toMatchObject({ command: "python3", args: ["./server/main.py"] });
    expect(serverOf(app).env.PYTHONPATH).toBe("./server/lib");
    expect(app.manifest.requires).toHaveLength(1);
  });
});
