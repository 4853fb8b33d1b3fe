import { describe, expect, it } from "vitest";
import { ApprovalKindSchema } from "./approvals";
import { defaultToolPolicy, isReservedToolName, toolCallKind, toolDefinitionDigest } from "./mcp-tools";

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

  it("keeps names that start with personalclaw for the platform", () => {
    expect(isReservedToolName("personalclaw_status")).toBe(true);
    expect(isReservedToolName("PersonalClaw.approve")).toBe(true);
    expect(isReservedToolName("my_personalclaw")).toBe(false);
  });
});
