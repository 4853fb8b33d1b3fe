// No manifest is installed that points anything at an address an app may not reach. Two places
// name an address outside the broker's own vetting: a network grant's address literal (the
// broker refuses a link-local one at every connection, but the grant read clean in the review)
// and a remote MCP server's URL, which the owner's agent dials itself, outside any broker and
// any sandbox: `https://169.254.169.254/` under a grant of `169.254.169.254:443` reached the
// cloud metadata service. Both are vetted here at preview (so at install and update too) by
// the broker's own rule (address-policy.ts).
import { mcpRemoteHost, type AppManifest } from "../../kernel/contracts/manifest";
import { parseHostPattern } from "../../kernel/rules/network-grant";
import { refuse, type Refusal } from "../staging/refusal";
import { canonicalAddress, vetAddress } from "./address-policy";

/**
 * Why the agent may not be pointed at `host`, a remote MCP server's URL host; null when it may.
 * The agent dials it with the owner's rights, so no address literal but a public one that is
 * not this machine's is allowed, whatever the grant says, and no name defined to be local. A
 * name's DNS is its owner's: the agent resolves it on its own, after any check here could.
 */
export function remoteServerHostRefusal(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return `${host} is this machine by definition (RFC 6761)`;
  const literal = canonicalAddress(name);
  if (literal === null) return null;
  const verdict = vetAddress(literal, false);
  return verdict.ok ? null : `${literal} is ${verdict.range}`;
}

/** The first address the manifest names that no app may reach, as a refusal; null when none. */
export function manifestAddressRefusal(manifest: AppManifest): Refusal | null {
  const network = manifest.permissions?.network;
  for (const [i, text] of (Array.isArray(network) ? network : []).entries()) {
    const pattern = parseHostPattern(text);
    if ("error" in pattern || pattern.kind !== "ip") continue;
    // A literal grant may open a local host the owner consents to (loopback, private); never
    // what the broker refuses even then (link-local metadata, multicast, reserved, unspecified).
    const verdict = vetAddress(pattern.host, true);
    if (!verdict.ok) {
      const field = `permissions.network[${i}]`;
      const reason = `it is ${verdict.range}, which the egress broker never dials`;
      return refuse(
        "manifest_address_refused",
        { field, address: pattern.host, reason },
        { field, detail: { address: pattern.host, range: verdict.range } },
      );
    }
  }
  for (const [server, declared] of Object.entries(manifest.mcpServers ?? {})) {
    if ((declared.transport ?? "stdio") !== "http") continue;
    const remote = mcpRemoteHost(declared.url ?? "");
    if (remote === null) continue;
    const why = remoteServerHostRefusal(remote.host);
    if (why !== null) {
      const field = `mcpServers.${server}.url`;
      const reason = `${why}, and the agent dials a remote server itself, outside the app's sandbox and broker`;
      return refuse(
        "manifest_address_refused",
        { field, address: remote.host, reason },
        { field, detail: { address: remote.host } },
      );
    }
  }
  return null;
}
