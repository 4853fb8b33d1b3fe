// What the owner adds to an app generated from a published package (`apps add --env --folder
// --arg`) is part of the bytes the owner consents to: each --folder becomes a need the manifest
// declares (with a reason naming the package), each --arg an argument after the server's
// program, the review shows both, and the consent digest changes with every one of them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { NpmClosure } from "../../kernel/contracts/npm-closure";
import { previewBundle } from "../install/preview";
import { generateNpmApp, NO_CHOICES, parseFolderNeed, writeGeneratedApp, type OwnerChoices } from "./npm-app";
import { generatePypiApp, PYPI_LAUNCHER } from "./pypi-app";

const scratch = mkdtempSync(join(tmpdir(), "pc-npm-app-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SOURCE = "npm:@modelcontextprotocol/server-filesystem@2025.3.28";
const closure: NpmClosure = {
  registry: "http://127.0.0.2:4873",
  root: { name: "@modelcontextprotocol/server-filesystem", version: "2025.3.28" },
  packages: [
    {
      path: "node_modules/@modelcontextprotocol/server-filesystem",
      name: "@modelcontextprotocol/server-filesystem",
      version: "2025.3.28",
      resolved: "http://127.0.0.2:4873/-/tarballs/modelcontextprotocol-server-filesystem-2025.3.28.tgz",
      integrity: `sha512-${Buffer.alloc(64).toString("base64")}`,
      size: 1000,
      bin: { "mcp-server-filesystem": "dist/index.js" },
      native: false,
    },
  ],
};
const documents: OwnerChoices = {
  env: [],
  folders: [{ name: "documents", access: "read-write" }],
  args: ["/folders/documents"],
};

async function preview(choices: OwnerChoices) {
  const app = generateNpmApp(closure, null, choices);
  const folder = await writeGeneratedApp(join(scratch, "quarantine"), app);
  const previewed = await previewBundle(folder, {
    quarantineRoot: join(scratch, "quarantine"),
    reservedNames: new Set(),
    core: { version: "0.1.0", features: [] },
  });
  if (!previewed.ok) throw new Error(`${previewed.code}: ${previewed.message}`);
  return { app, review: previewed.review, digest: previewed.digest };
}

describe("an app generated with --folder and --arg", () => {
  it("declares each need with a reason naming the package and runs the program with the arguments after it", async () => {
    const { app, review } = await preview(documents);
    const why = `The MCP server of ${SOURCE} reads and changes the folder you grant here; it sees it at /folders/documents.`;
    expect((app.manifest.permissions as Record<string, unknown>).folders).toEqual([
      { name: "documents", why, access: "read-write" },
    ]);
    expect(review.permissions.folders).toEqual([`documents (read-write): ${why}`]);
    expect(review.mcpServers.map((m) => [m.command, m.args])).toEqual([
      ["node", ["node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/folders/documents"]],
    ]);
  });

  it("the consent digest changes with each --folder, its access and each --arg, and not otherwise", async () => {
    const plain = (await preview(NO_CHOICES)).digest;
    const withFolder = (await preview(documents)).digest;
    const readOnly = (await preview({ ...documents, folders: [{ name: "documents", access: "read" }] })).digest;
    const noArg = (await preview({ ...documents, args: [] })).digest;
    const otherArg = (await preview({ ...documents, args: ["/folders/documents", "/folders"] })).digest;
    expect(new Set([plain, withFolder, readOnly, noArg, otherArg]).size).toBe(5);
    expect((await preview(documents)).digest).toBe(withFolder);
    // An app without choices keeps the bytes (and so the digest) it had before the flags existed.
    const bare = generateNpmApp(closure, null, NO_CHOICES).manifest;
    expect(bare.permissions).toEqual({ storage: true, network: false });
  });

  it("a PyPI server gets the arguments after its launcher, and the same needs", () => {
    const app = generatePypiApp(
      {
        index: "http://127.0.0.2:4874/simple",
        root: { name: "fs-server", version: "1.0.0" },
        wheels: [],
        consoleScripts: { "fs-server": "fs_server:main" },
        summary: null,
      },
      documents,
    );
    const server = (app.manifest.mcpServers as Record<string, { args: string[] }>)["fs-server"]!;
    expect(server.args).toEqual([PYPI_LAUNCHER, "/folders/documents"]);
    expect((app.manifest.permissions as { folders: Array<{ why: string }> }).folders[0]!.why).toContain(
      "pypi:fs-server==1.0.0",
    );
  });

  it("--folder reads NEED, NEED:read and NEED:read-write, and refuses anything else with the reason", () => {
    expect(parseFolderNeed("documents")).toEqual({ ok: true, value: { name: "documents", access: "read" } });
    expect(parseFolderNeed("my_notes-2:read")).toEqual({ ok: true, value: { name: "my_notes-2", access: "read" } });
    expect(parseFolderNeed("documents:read-write")).toEqual({
      ok: true,
      value: { name: "documents", access: "read-write" },
    });
    for (const bad of ["documents:write", "", ":read", "../etc:read", "a/b", "documents:read:read-write"])
      expect(parseFolderNeed(bad).ok, bad).toBe(false);
  });
});
