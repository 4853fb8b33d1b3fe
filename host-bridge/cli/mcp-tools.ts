// `personalclaw mcp tools <app>` and `mcp policy <app> <server> <tool> allow|ask|deny` (issue
// 39): each server's pinned tools with their policy and state, and the owner's choice for one
// tool. A loosening proves the owner's presence with the local secret, as other loosenings do.
import { z } from "zod";
import { ServerToolsViewSchema, ToolPolicySchema, ToolViewSchema } from "../../kernel/contracts/mcp-tools";
import { safeLine } from "../../kernel/text/text-safety";
import { callGateway, parseAnswer, type GatewayAnswer } from "./gateway-client";
import { UsageError } from "./usage-error";

const EXIT_REFUSED = 3;

function fail(answer: GatewayAnswer, json: boolean): number {
  const error = answer.body?.error ?? { code: "unexpected_answer", message: `The gateway answered ${answer.status}.` };
  if (json) process.stdout.write(`${JSON.stringify({ error })}\n`);
  else process.stderr.write(`personalclaw: ${safeLine(String(error.message))} (${safeLine(String(error.code))})\n`);
  return answer.status >= 400 && answer.status < 500 ? EXIT_REFUSED : 1;
}

const STATE_WORDS: Record<string, string> = {
  pinned: "pinned",
  new: "new: withheld until you approve it in the Inbox",
  changed: "changed: withheld until you approve the change in the Inbox",
  removed: "removed: approve in the Inbox to unpin it",
  conflict: "conflict: withheld",
};

export async function runMcpTools(home: string, app: string, values: { json?: boolean }): Promise<number> {
  const answer = await callGateway(home, "mcp-tools", "GET", `/api/mcp/${encodeURIComponent(app)}/tools`);
  const parsed = parseAnswer(answer, z.object({ app: z.string(), servers: z.array(ServerToolsViewSchema) }));
  if (!parsed.ok) return fail(parsed.answer, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  if (parsed.body.servers.length === 0) process.stdout.write(`${safeLine(app)} declares no MCP server.\n`);
  for (const server of parsed.body.servers) {
    process.stdout.write(
      server.consentDigest === null
        ? `${safeLine(`${app}:${server.server}`)}  not pinned yet: its tools are pinned at its first run\n`
        : `${safeLine(`${app}:${server.server}`)}  pinned ${server.pinnedAt}\n`,
    );
    for (const tool of server.tools) {
      const conflict = tool.conflictWith ? ` (the name is ${safeLine(tool.conflictWith)}'s)` : "";
      const setBy = tool.policySetBy === "owner" ? "set by you" : "default";
      process.stdout.write(
        `  ${safeLine(tool.name)}  ${tool.policy} (${setBy})  ${STATE_WORDS[tool.state]}${conflict}\n`,
      );
      const description = tool.pinned?.description ?? tool.offered?.description;
      if (description) process.stdout.write(`    ${safeLine(description.slice(0, 200))}\n`);
    }
  }
  return 0;
}

export async function runMcpPolicy(
  home: string,
  args: { app: string; server: string; tool: string; policy: string },
  values: { json?: boolean },
): Promise<number> {
  const policy = ToolPolicySchema.safeParse(args.policy);
  if (!policy.success)
    throw new UsageError(`the policy is allow, ask or deny, not '${args.policy}'`, ["mcp", "policy"]);
  const path = `/api/mcp/${encodeURIComponent(args.app)}/${encodeURIComponent(args.server)}/tools/${encodeURIComponent(args.tool)}/policy`;
  // Presence is proved for every change: the gateway asks for it only when the change loosens.
  const answer = await callGateway(home, "mcp-policy", "POST", path, { policy: policy.data }, { provePresence: true });
  const parsed = parseAnswer(answer, z.object({ tool: ToolViewSchema }));
  if (!parsed.ok) return fail(parsed.answer, Boolean(values.json));
  process.stdout.write(
    values.json
      ? `${JSON.stringify(answer.body)}\n`
      : `${safeLine(`${args.app}:${args.server} ${args.tool}`)}: ${parsed.body.tool.policy}, from the next call on.\n`,
  );
  return 0;
}
