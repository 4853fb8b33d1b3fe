import { describe, expect, it } from "vitest";
import {
  MCPB_BUNDLE,
  NPM_CLOSURE,
  PYPI_CLOSURE,
  REGISTRY_ENTRY,
  SOURCE_REVIEWS,
} from "../../test/helpers/source-reviews";
import { sourceSummary } from "./source-review";

const summaryOf = (name: string) => sourceSummary(SOURCE_REVIEWS.find((s) => s.name === name)!.review);

describe("where a generated app comes from, at a glance", () => {
  it("an npm package: its name and version, its scope as the publisher, the closure's count, size and native code", () => {
    expect(sourceSummary({ npmClosure: NPM_CLOSURE })).toEqual({
      kind: "npm package",
      name: "@modelcontextprotocol/server-memory",
      version: "2025.8.4",
      publisher: "the npm scope @modelcontextprotocol, as http://127.0.0.2:4873/ serves it (no signature is checked)",
      packages: 95,
      bytes: 3_250_000,
      pinned: "95 npm packages, 3.1 MiB of tarballs, each by its sha512 integrity",
      native: ["esbuild@0.25.0"],
      signature: null,
    });
    expect(summaryOf("unscoped npm")!.publisher).toContain("not stated");
    expect(summaryOf("unscoped npm")!.native).toEqual([]);
  });

  it("an .mcpb: the signer is the publisher only when the signature is verified; the author's word is a claim", () => {
    expect(sourceSummary({ mcpbBundle: MCPB_BUNDLE })).toMatchObject({
      kind: ".mcpb bundle",
      name: "notes",
      version: "1.0.0",
      publisher: "CN=Signed Publisher Ltd, whose signature is verified (the bundle says Ada Example <ada@example.com>)",
      pinned: "the bundle by its sha256 (1.2 MiB): 765 files, 5.5 MiB unpacked",
      native: null,
      signature: { state: "verified", signer: "CN=Signed Publisher Ltd" },
    });
    const untrusted = summaryOf("mcpb untrusted binary")!;
    expect(untrusted.publisher).toBe("Ada Example <ada@example.com>, as the bundle states it (not proven)");
    expect(untrusted.signature).toEqual({ state: "untrusted", signer: "CN=Signed Publisher Ltd" });
    expect(untrusted.native).toEqual(["its server, a program built for this machine"]);
    expect(summaryOf("mcpb unsigned")!.signature).toEqual({ state: "unsigned", signer: null });
  });

  it("a registry entry: its namespace, verified only by the official registry, and its package's closure", () => {
    expect(sourceSummary({ npmClosure: NPM_CLOSURE, mcpRegistryEntry: REGISTRY_ENTRY })).toMatchObject({
      kind: "MCP Registry entry",
      name: "io.github.modelcontextprotocol/server-memory",
      publisher: "the namespace io.github.modelcontextprotocol, whose owner the official MCP Registry verified",
      packages: 95,
    });
    expect(summaryOf("registry mcpb elsewhere")!.publisher).toBe(
      "the namespace io.github.modelcontextprotocol, as the registry https://mcp.example.com lists it (not the official MCP Registry)",
    );
    expect(summaryOf("ordinary app")).toBeNull();
    expect(sourceSummary({ mcpbBundle: "not an object", npmClosure: [1] })).toBeNull();
  });

  it("a PyPI project: its name and version, no publisher it can check, the wheels' count and size", () => {
    expect(sourceSummary({ pypiClosure: PYPI_CLOSURE })).toEqual({
      kind: "PyPI project",
      name: "weather-mcp",
      version: "1.2.0",
      publisher: "not stated: a project of http://127.0.0.2:8080/simple/, which names no publisher PersonalClaw checks",
      packages: 3,
      bytes: 48_000,
      pinned: "3 wheels, 46.9 KiB, each by its sha256",
      native: [],
      signature: null,
    });
    expect(summaryOf("registry pypi")).toMatchObject({ kind: "MCP Registry entry", packages: 3 });
  });
});
