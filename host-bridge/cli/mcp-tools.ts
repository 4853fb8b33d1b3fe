// `personalclaw mcp tools <app>`, `mcp policy <app> <server> <tool> allow|ask|deny` and
// `mcp log-arguments <app> <server> <tool> on|off` (issue 39): each server's pinned tools with
// their policy, state and logging switch, and the owner's choice for one tool. A loosening
// proves the owner's presence with the local secret, as other loosenings do.
import { z } from "zod";
import { ServerToolsViewSchema, ToolPolicySchema, ToolViewSchema } from "../../kernel/contracts/mcp-tools";
import { safeLine } from "../../kernel/text/text-safety";
import { callGateway, parseAnswer } from "./gateway-client";
import { UsageError } from "./usage-error";
import { printRefusal } from "./print";

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
  if (!parsed.ok) return printRefusal(parsed.answer, Boolean(values.json));
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
      const logged = tool.logArguments ? "  argument values logged" : "";
      process.stdout.write(
        `  ${safeLine(tool.name)}  ${tool.policy} (${setBy})  ${STATE_WORDS[tool.state]}${conflict}${logged}\n`,
      );
      const description = tool.pinned?.description ?? tool.offered?.description;
      if (description) process.stdout.write(`    ${safeLine(description.slice(0, 200))}\n`);
    }
  }
  return 0;
}

type ToolNamed = { app: string; server: string; tool: string };

/** Sends one switch of a tool and prints what holds from the next call on. */
async function setToolSwitch(
  home: string,
  args: ToolNamed,
  which: { path: "policy" | "arguments-log"; body: object; said: (tool: z.infer<typeof ToolViewSchema>) => string },
  values: { json?: boolean },
): Promise<number> {
  const path = `/api/mcp/${encodeURIComponent(args.app)}/${encodeURIComponent(args.server)}/tools/${encodeURIComponent(args.tool)}/${which.path}`;
  // Presence is proved for every change: the gateway asks for it only when the change loosens.
  const answer = await callGateway(home, `mcp-${which.path}`, "POST", path, which.body, { provePresence: true });
  const parsed = parseAnswer(answer, z.object({ tool: ToolViewSchema }));
  if (!parsed.ok) return printRefusal(parsed.answer, Boolean(values.json));
  process.stdout.write(
    values.json
      ? `${JSON.stringify(answer.body)}\n`
      : `${safeLine(`${args.app}:${args.server} ${args.tool}`)}: ${which.said(parsed.body.tool)}, from the next call on.\n`,
  );
  return 0;
}

export async function runMcpPolicy(
  home: string,
  args: ToolNamed & { policy: string },
  values: { json?: boolean },
): Promise<number> {
  const policy = ToolPolicySchema.safeParse(args.policy);
  if (!policy.success)
    throw new UsageError(`the policy is allow, ask or deny, not '${args.policy}'`, ["mcp", "policy"]);
  return setToolSwitch(home, args, { path: "policy", body: { policy: policy.data }, said: (t) => t.policy }, values);
}

export async function runMcpLogArguments(
  home: string,
  args: ToolNamed & { state: string },
  values: { json?: boolean },
): Promise<number> {
  if (args.state !== "on" && args.state !== "off")
    throw new UsageError(`say on or off, not '${args.state}'`, ["mcp", "log-arguments"]);
  return setToolSwitch(
    home,
    args,
    {
      path: "arguments-log",
      body: { log: args.state === "on" },
      said: (t) => (t.logArguments ? "argument values are logged" : "only a digest of the arguments is logged"),
    },
    values,
  );
}
