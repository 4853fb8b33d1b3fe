import { describe, expect, it } from "vitest";
import { ApprovalKindSchema } from "./approvals";
import {
  ToolDefinitionSchema,
  defaultToolPolicy,
  isReservedToolName,
  toolCallKind,
  toolDefinitionDigest,
} from "./mcp-tools";

describe("tool policy defaults and names", () => {
  it("allows by default only a tool that says it is read-only and says it does not reach an open world", () => {
    expect(defaultToolPolicy({ readOnlyHint: true, openWorldHint: false })).toBe("allow");
    expect(defaultToolPolicy({ readOnlyHint: true })).toBe("ask");
    expect(defaultToolPolicy({ readOnlyHint: true, openWorldHint: true })).toBe("ask");
    expect(defaultToolPolicy({ destructiveHint: true, openWorldHint: false })).toBe("ask");
    expect(defaultToolPolicy(undefined)).toBe("ask");
  });

  it("gives every tool name an approval kind of its own, one a kind may be", async () => {
    const names = ["read_note", "Read_Note", "search-files", "数据", "a.b/c"];
    const kinds = await Promise.all(names.map(toolCallKind));
    for (const kind of kinds) expect(ApprovalKindSchema.safeParse(kind).success, kind).toBe(true);
    expect(new Set(kinds).size).toBe(names.length);
  });

  it("digests a definition whatever the order of its keys", async () => {
    const a = await toolDefinitionDigest({ name: "t", description: "d", inputSchema: { type: "object", a: 1 } });
    const b = await toolDefinitionDigest({ inputSchema: { a: 1, type: "object" }, description: "d", name: "t" });
    const c = await toolDefinitionDigest({ name: "t", description: "d!", inputSchema: { type: "object", a: 1 } });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it("pins only names of printable ASCII without spaces: none a model reads as another's", () => {
    const takes = (name: string) => ToolDefinitionSchema.safeParse({ name, inputSchema: { type: "object" } }).success;
    for (const name of ["read_file", "Read-File.v2", "github/create_issue", "ns:tool", "x".repeat(128)])
      expect(takes(name), name).toBe(true);
    const shadows = [
      "read_f\u0456le", // Cyrillic і
      "read\u200Bfile", // zero-width space
      "read_file\u202E", // right-to-left override
      "read file",
      "read_file\n",
      "ｒｅａｄ_file", // fullwidth
      "",
      "x".repeat(129),
    ];
    for (const name of shadows) expect(takes(name), JSON.stringify(name)).toBe(false);
  });

  it("keeps names that start with personalclaw for the platform", () => {
    expect(isReservedToolName("personalclaw_status")).toBe(true);
    expect(isReservedToolName("PersonalClaw.approve")).toBe(true);
    expect(isReservedToolName("my_personalclaw")).toBe(false);
  });
});
