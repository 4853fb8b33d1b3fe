// The bridge's /backends/ and /mcp/ operations: starting, restarting and stopping app
// backends, and writing the entries of <home>/mcp.json (docs/mcp-servers.md) that exactly the
// named manifest declares.
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import type { HandlersUnder } from "../bridge-contract";
import type { BridgeRuntime } from "../bridge-runtime";

export function backendOperations(rt: BridgeRuntime): HandlersUnder<"/backends/"> & HandlersUnder<"/mcp/"> {
  return {
    "POST /backends/start": async ({ body: { name, manifest, digest } }) => {
      if (digest !== undefined) rt.digests.set(name, digest);
      return rt.startBackend(name, manifest as AppManifest, digest);
    },
    "POST /backends/restart": async ({ body: { name, manifest, digest } }) => {
      if (digest !== undefined) rt.digests.set(name, digest);
      if (!rt.supervisor.status(name)) return rt.startBackend(name, manifest as AppManifest, digest);
      // A restart opens the secrets and reads the folder grants again, so a change since the last start applies now.
      const restarted = await rt.supervisor.restart(
        name,
        await rt.secretsFor(name, manifest as AppManifest, digest ?? rt.digests.get(name)),
        await rt.foldersFor(name),
        await rt.brokeredSecretsFor(name, manifest as AppManifest, digest ?? rt.digests.get(name)),
      );
      if (!restarted.ok) {
        // A refused start is evidence, as at a first start (a granted folder swapped for a link, say).
        await rt.reporting.audit({
          kind: "backend_start_refused",
          outcome: "refused",
          subject: name,
          detail: { code: restarted.code },
        });
        throw new GatewayError("app_restart_failed", { vars: { name, reason: restarted.reason } });
      }
      await rt.report(name, rt.supervisor.status(name)!);
      return { started: true };
    },
    "POST /backends/stop": async ({ body: { name } }) => {
      await rt.stopBackend(name);
      return { stopped: true };
    },
    "POST /mcp/register": async ({ body: { name, manifest, off, previousManifest } }) =>
      rt.mcpJson.register(name, manifest as AppManifest, off, previousManifest as AppManifest | undefined),
    "POST /mcp/deregister": async ({ body: { name, manifest } }) =>
      rt.mcpJson.deregister(name, manifest as AppManifest),
    "POST /mcp/flag": async ({ body: { key, enabled } }) => rt.mcpJson.flag(key, enabled),
  };
}
