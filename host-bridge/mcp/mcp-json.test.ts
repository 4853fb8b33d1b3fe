import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { McpJson, rehomeMcpEntries } from "./mcp-json";

const manifest = (extra: Record<string, unknown>): AppManifest =>
  AppManifestSchema.parse({ name: "demo", version: "1.0.0", ...extra });
const stdio = manifest({ mcpServers: { notes: { command: "node", args: ["s.mjs"] }, search: { command: "python3" } } });

describe("mcp.json", () => {
  let dir: string;
  let path: string;
  let file: McpJson;
  const read = () => JSON.parse(readFileSync(path, "utf8"));
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "pc-mcp-json-"));
    path = join(dir, "mcp.json");
    file = new McpJson(path, { cli: "/pkg/bin/personalclaw.mjs", home: "/h" });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a restored file's `mcp run` entries are pointed at the new home and command; the owner's entries and flags stay", async () => {
    await file.register("demo", stdio, []);
    const doc = read();
    doc.theme = 1;
    doc.mcpServers.mine = { command: "x", args: ["mcp", "run", "other", "thing", "--home", "/h"] };
    doc.mcpServers["demo:notes"].disabledTools = ["delete"];
    writeFileSync(path, JSON.stringify(doc));
    const changed = rehomeMcpEntries(path, { cli: "/new/bin/personalclaw.mjs", home: "/restored" });
    expect(changed).toEqual(["demo:notes", "demo:search"]);
    expect(read()).toEqual({
      theme: 1,
      mcpServers: {
        "demo:notes": {
          command: "/new/bin/personalclaw.mjs",
          args: ["mcp", "run", "demo", "notes", "--home", "/restored"],
          disabledTools: ["delete"],
        },
        "demo:search": {
          command: "/new/bin/personalclaw.mjs",
          args: ["mcp", "run", "demo", "search", "--home", "/restored"],
        },
        // Not under its own key: not a PersonalClaw entry, left as the owner wrote it.
        mine: { command: "x", args: ["mcp", "run", "other", "thing", "--home", "/h"] },
      },
    });
  });

  it("writes each declared server as `personalclaw mcp run`, 0600, keeping other entries, keys and the owner's flags", async () => {
    writeFileSync(
      path,
      JSON.stringify({
        theme: 1,
        mcpServers: { mine: { command: "x" }, "demo:notes": { command: "old", autoApprove: ["a"], disabled: true } },
      }),
    );
    const result = await file.register("demo", stdio, []);
    expect(result).toEqual({ registered: ["demo:notes", "demo:search"], skipped: [], removed: [] });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(read()).toEqual({
      theme: 1,
      mcpServers: {
        mine: { command: "x" },
        "demo:notes": {
          autoApprove: ["a"],
          command: "/pkg/bin/personalclaw.mjs",
          args: ["mcp", "run", "demo", "notes", "--home", "/h"],
        },
        "demo:search": { command: "/pkg/bin/personalclaw.mjs", args: ["mcp", "run", "demo", "search", "--home", "/h"] },
      },
    });
  });

  it("deregisters exactly the declared names, never another entry under the app's prefix", async () => {
    writeFileSync(path, JSON.stringify({ mcpServers: { "demo:custom": { command: "mine" } } }));
    await file.register("demo", stdio, []);
    expect((await file.deregister("demo", stdio)).removed).toEqual(["demo:notes", "demo:search"]);
    expect(read().mcpServers).toEqual({ "demo:custom": { command: "mine" } });
  });

  it("an update removes the servers only the previous version declared", async () => {
    await file.register("demo", stdio, []);
    const next = manifest({ mcpServers: { notes: { command: "node" } } });
    expect((await file.register("demo", next, [], stdio)).removed).toEqual(["demo:search"]);
    expect(Object.keys(read().mcpServers)).toEqual(["demo:notes"]);
  });

  it("writes the owner's off switch as disabled and clears it when on", async () => {
    await file.register("demo", stdio, ["notes"]);
    expect(read().mcpServers["demo:notes"].disabled).toBe(true);
    await file.flag("demo:notes", true);
    expect(read().mcpServers["demo:notes"].disabled).toBeUndefined();
  });

  it("registers a remote server only when its host is in the network grant", async () => {
    const remote = (network: unknown) =>
      manifest({
        permissions: { network },
        mcpServers: { api: { transport: "http", url: "https://api.example.com/mcp" } },
      });
    const refused = await file.register("demo", remote(["other.example.com"]), []);
    expect(refused.registered).toEqual([]);
    expect(refused.skipped[0]!.reason).toContain("api.example.com:443");
    expect(read().mcpServers).toEqual({});
    expect((await file.register("demo", remote(["api.example.com"]), [])).registered).toEqual(["demo:api"]);
    expect(read().mcpServers["demo:api"]).toEqual({ type: "http", url: "https://api.example.com/mcp" });
  });

  it("never overwrites a file that is not a JSON server map, nor writes through a link", async () => {
    writeFileSync(path, "{not json");
    await expect(file.register("demo", stdio, [])).rejects.toBeInstanceOf(GatewayError);
    expect(readFileSync(path, "utf8")).toBe("{not json");
    writeFileSync(path, JSON.stringify({ mcpServers: [] }));
    await expect(file.register("demo", stdio, [])).rejects.toMatchObject({ code: "mcp_json_unreadable" });
    rmSync(path);
    writeFileSync(join(dir, "elsewhere.json"), "{}");
    symlinkSync(join(dir, "elsewhere.json"), path);
    await expect(file.register("demo", stdio, [])).rejects.toMatchObject({ code: "mcp_json_unreadable" });
    expect(readFileSync(join(dir, "elsewhere.json"), "utf8")).toBe("{}");
  });

  it("concurrent registrations of two apps keep both", async () => {
    const other = AppManifestSchema.parse({ name: "other", version: "1", mcpServers: { x: { command: "node" } } });
    await Promise.all([file.register("demo", stdio, []), file.register("other", other, [])]);
    expect(Object.keys(read().mcpServers).sort()).toEqual(["demo:notes", "demo:search", "other:x"]);
  });
});
