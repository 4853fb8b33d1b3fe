// The worker's door to the bridge's mcp.json writer: an app's declared servers are written on
// install and enable and removed on disable and uninstall (MCP-01, C-12). The bridge owns the
// file; the registry owns each server's switch and start record.
import { appRegistry } from "../durable/instances";
import type { AppManifest } from "../kernel/contracts/manifest";
import type { McpRegistration } from "../kernel/contracts/mcp";
import { bridgeCall } from "./bridge-client";
import type { Env } from "../durable/env";

/**
 * Writes the app's servers into mcp.json; the owner's switch of each is carried as `disabled`.
 * With `previous` (an update), the servers only the previous manifest declared are removed.
 */
export async function registerMcpServers(
  env: Env,
  name: string,
  manifest: AppManifest,
  previous?: AppManifest,
): Promise<McpRegistration> {
  if (Object.keys(manifest.mcpServers ?? {}).length === 0 && Object.keys(previous?.mcpServers ?? {}).length === 0)
    return { registered: [], skipped: [], removed: [] };
  const views = await appRegistry(env).mcpServers(Date.now());
  const off = views.filter((v) => v.app === name && !v.ownerEnabled).map((v) => v.server);
  return bridgeCall(
    env,
    "POST /mcp/register",
    { name, manifest, off, ...(previous ? { previousManifest: previous } : {}) },
    30_000,
  );
}

/** Removes exactly the servers `manifest` declares for the app from mcp.json (ownership by exact name, MCP-02). */
export async function deregisterMcpServers(env: Env, name: string, manifest: AppManifest): Promise<McpRegistration> {
  if (Object.keys(manifest.mcpServers ?? {}).length === 0) return { registered: [], skipped: [], removed: [] };
  return bridgeCall(env, "POST /mcp/deregister", { name, manifest }, 30_000);
}

/** Sets or clears the owner's `disabled` flag of one registered entry. */
export async function flagMcpServer(env: Env, key: string, enabled: boolean): Promise<void> {
  await bridgeCall(env, "POST /mcp/flag", { key, enabled }, 30_000);
}
