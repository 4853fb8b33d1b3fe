// `mcp run` speaks MCP on both sides (issue 39) with the official TypeScript SDK: a Server
// over stdio towards the agent, a Client over the confined server's stdio. The agent sees only
// the tools pinned to the owner's consent (the gateway answers which, at every listing), and
// every call passes the owner's policy (tool-calls.ts). Resources, prompts, completions and
// log levels are relayed as the server offers them, not pinned; the server's `instructions`
// are not relayed (text that steers the model, which no pin covers), nor are requests from the
// server to the agent (sampling, elicitation, roots): the client declares none of them.
import type { Readable, Writable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ReadResourceRequestSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  ToolListChangedNotificationSchema,
  UnsubscribeRequestSchema,
  type Progress,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import {
  ToolDefinitionSchema,
  toolDefinitionDigest,
  type ToolDefinition,
  type ToolView,
} from "../../kernel/contracts/mcp-tools";
import { safeLine } from "../../kernel/text/text-safety";
import { capAnswers } from "./answer-cap";
import { mediateCall, type CallBounds, type ToolGate } from "./tool-calls";

/** The gateway's answers about this server's tools, and its verdict per call. */
export interface MediatorGate extends ToolGate {
  /** Reports what the server offers; answers each tool's state (the agent sees the `pinned` ones). */
  report(tools: ToolDefinition[]): Promise<ToolView[]>;
}

export interface MediatorOptions {
  app: string;
  server: string;
  version: string;
  agent: { stdin: Readable; stdout: Writable };
  /** The confined server's stdout and stdin. */
  child: { stdout: Readable; stdin: Writable };
  gate: MediatorGate;
  bounds: CallBounds;
  /** How long the server's first answer may take (a package runner installing). */
  firstAnswerMs: number;
  log: (line: string) => void;
}

/** The definition the owner pins, from what the server lists: only the parts the model reads or sends. */
function definitionOf(tool: Tool): ToolDefinition | null {
  const parsed = ToolDefinitionSchema.safeParse({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  });
  return parsed.success ? parsed.data : null;
}

/**
 * Connects both sides: `ready` resolves once the agent's side listens (and rejects when the
 * server never answered); `close` ends both, a connection still being made included.
 */
export function mediate(options: MediatorOptions): { ready: Promise<void>; close: () => Promise<void> } {
  const client = new Client({ name: "personalclaw", version: options.version }, { capabilities: {} });
  let server: Server | null = null;
  // The SDK's stdio transport does not watch for the end of its stream: the agent leaving ends
  // the server (its stdin closes), as when bytes were relayed.
  options.agent.stdin.once("end", () => options.child.stdin.end());
  return {
    ready: connectBoth(options, client, (connected) => (server = connected)),
    close: async () => {
      await server?.close().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

async function connectBoth(options: MediatorOptions, client: Client, connected: (server: Server) => void) {
  const key = `${options.app}:${options.server}`;
  const fromChild = options.child.stdout.pipe(
    capAnswers(options.bounds.maxAnswerBytes, (id) =>
      options.log(
        `personalclaw: ${key}: an answer larger than ${options.bounds.maxAnswerBytes} bytes was dropped (id ${id ?? "unreadable"})`,
      ),
    ),
  );
  const toChild = new StdioServerTransport(fromChild, options.child.stdin, {
    maxBufferSize: options.bounds.maxAnswerBytes * 2 + 65_536,
  });
  await client.connect(toChild, { timeout: options.firstAnswerMs });
  const offered = client.getServerCapabilities() ?? {};
  const server = new Server(
    { name: key, version: client.getServerVersion()?.version ?? options.version },
    { capabilities: relayedCapabilities(offered) },
  );
  /** What the server offers now, by name, with the digest the pins compare. */
  let current: Map<string, string> | null = null;

  const listTools = async () => {
    const all: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      all.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && all.length < 10_000);
    const definitions: ToolDefinition[] = [];
    for (const tool of all) {
      const definition = definitionOf(tool);
      if (definition) definitions.push(definition);
      else
        options.log(
          `personalclaw: ${key}: the tool '${safeLine(String(tool.name).slice(0, 128))}' is withheld: its name is not printable ASCII without spaces, or its definition is not readable`,
        );
    }
    const digests = new Map<string, string>();
    for (const definition of definitions) digests.set(definition.name, await toolDefinitionDigest(definition));
    current = digests;
    let views: ToolView[];
    try {
      views = await options.gate.report(definitions);
    } catch (error) {
      throw new McpError(ErrorCode.InternalError, `PersonalClaw could not check ${key}'s tools: ${String(error)}`);
    }
    // In the server's own order: the agent sees the list as the server gave it, less what is withheld.
    const pinned = new Map(
      views.filter((v) => v.state === "pinned" && v.pinned !== null).map((v) => [v.name, v.pinned!]),
    );
    return definitions.filter((d) => pinned.has(d.name)).map((d) => pinned.get(d.name)!);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await listTools()) as Tool[] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (current === null) await listTools();
    // An agent that asked for progress hears the server's, under the token it chose.
    const progressToken = request.params._meta?.progressToken;
    const onprogress =
      progressToken === undefined
        ? undefined
        : (progress: Progress) =>
            void extra
              .sendNotification({ method: "notifications/progress", params: { ...progress, progressToken } })
              .catch(() => {});
    return mediateCall(
      { key, app: options.app, client, gate: options.gate, bounds: options.bounds },
      {
        name: request.params.name,
        args: request.params.arguments,
        definitionDigest: current!.get(request.params.name) ?? null,
      },
      extra.signal,
      onprogress,
    );
  });
  relayTheRest(server, client, offered);
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    current = null;
    await server.sendToolListChanged();
  });

  connected(server);
  await server.connect(new StdioServerTransport(options.agent.stdin, options.agent.stdout));
}

/** What the agent is told the server can do: tools always (mediated), the rest as the server offers it. */
function relayedCapabilities(offered: ServerCapabilities): ServerCapabilities {
  return {
    tools: { listChanged: true },
    ...(offered.resources ? { resources: offered.resources } : {}),
    ...(offered.prompts ? { prompts: offered.prompts } : {}),
    ...(offered.completions ? { completions: offered.completions } : {}),
    ...(offered.logging ? { logging: offered.logging } : {}),
  };
}

/** Resources, prompts, completions and log levels: each request and notification relayed as it is. */
function relayTheRest(server: Server, client: Client, offered: ServerCapabilities): void {
  if (offered.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, (r, e) =>
      client.listResources(r.params, { signal: e.signal }),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (r, e) =>
      client.listResourceTemplates(r.params, { signal: e.signal }),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (r, e) => client.readResource(r.params, { signal: e.signal }));
    if (offered.resources.subscribe) {
      server.setRequestHandler(SubscribeRequestSchema, (r, e) =>
        client.subscribeResource(r.params, { signal: e.signal }),
      );
      server.setRequestHandler(UnsubscribeRequestSchema, (r, e) =>
        client.unsubscribeResource(r.params, { signal: e.signal }),
      );
    }
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => server.sendResourceListChanged());
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => server.sendResourceUpdated(n.params));
  }
  if (offered.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (r, e) => client.listPrompts(r.params, { signal: e.signal }));
    server.setRequestHandler(GetPromptRequestSchema, (r, e) => client.getPrompt(r.params, { signal: e.signal }));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => server.sendPromptListChanged());
  }
  if (offered.completions)
    server.setRequestHandler(CompleteRequestSchema, (r, e) => client.complete(r.params, { signal: e.signal }));
  if (offered.logging) {
    server.setRequestHandler(SetLevelRequestSchema, async (r, e) => {
      await client.setLoggingLevel(r.params.level, { signal: e.signal });
      return {};
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => server.sendLoggingMessage(n.params));
  }
}
