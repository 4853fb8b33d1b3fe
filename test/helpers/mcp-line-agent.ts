// An agent's side of MCP over a spawned `personalclaw mcp run`, written against the protocol
// itself (newline-delimited JSON-RPC), for suites that also watch the process: when it exits,
// what it printed on stderr, which programs run under it. Initializes once, lists the tools
// (the first listing of an install pins them), then calls tools and answers their first text.
import type { ChildProcess } from "node:child_process";
import { expect } from "vitest";

export interface McpLineAgent {
  /** Calls `tool` with `args`; answers the first text content of its result, parsed as JSON. */
  callJson(tool: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export function mcpLineAgent(child: ChildProcess): McpLineAgent {
  const { stdin, stdout } = child;
  if (!stdin || !stdout) throw new Error("mcp run needs piped standard input and output");
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  let nextId = 0;
  let ready: Promise<void> | null = null;
  const ask = (method: string, params: unknown): Promise<Record<string, any>> => {
    const id = (nextId += 1);
    const answer = new Promise<Record<string, any>>((resolve, reject) => {
      let out = "";
      const onData = (chunk: Buffer) => {
        out += chunk.toString("utf8");
        for (const line of out.split("\n").slice(0, -1)) {
          const message = JSON.parse(line) as Record<string, any>;
          if (message.id !== id) continue;
          stdout.off("data", onData);
          resolve(message);
        }
        out = out.slice(out.lastIndexOf("\n") + 1);
      };
      stdout.on("data", onData);
      void exited.then((code) => reject(new Error(`mcp run exited ${code} before answering ${method}`)));
    });
    stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answer;
  };
  const initialize = async () => {
    const clientInfo = { name: "test-agent", version: "1.0.0" };
    await ask("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo });
    stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    await ask("tools/list", {});
  };
  return {
    async callJson(tool, args = {}) {
      ready ??= initialize();
      await ready;
      const called = await ask("tools/call", { name: tool, arguments: args });
      expect(called.error, JSON.stringify(called.error)).toBeUndefined();
      return JSON.parse(called.result.content[0].text) as Record<string, unknown>;
    },
  };
}
