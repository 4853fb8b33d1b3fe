// The agent of the MCP suites: the official SDK's client, started from the home's mcp.json the
// way an agent's settings start a server (its command and arguments, a plain environment), with
// the server side's stderr kept for the assertion messages.
import { readFileSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error a bundled ES module without types
import { Client, StdioClientTransport } from "../fixtures/mcp-client-sdk.mjs";

export interface McpAgent {
  client: any;
  stderr: () => string;
  close: () => Promise<void>;
}

/** Connects to the server registered as `key` (`app:server`) in `home`'s mcp.json. */
export async function agentFromMcpJson(home: string, key: string, ownerHome: string): Promise<McpAgent> {
  const servers = (
    JSON.parse(readFileSync(join(home, "mcp.json"), "utf8")) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    }
  ).mcpServers;
  const entry = servers[key];
  if (!entry) throw new Error(`mcp.json has no server ${key}`);
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    env: { PATH: process.env.PATH!, HOME: ownerHome },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`${key} did not start: ${String(error)}; its stderr: ${stderr}`, { cause: error });
  }
  return { client, stderr: () => stderr, close: () => client.close() };
}
