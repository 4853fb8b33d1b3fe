// Which addresses an app's egress may dial. Threat: a granted name that resolves (or is made
// to resolve, by DNS rebinding) to the owner's own machine, LAN, router or a cloud metadata
// service turns "api.example.com" into a way into everything local. Only public unicast
// addresses that are not this machine's own are dialled, unless the grant names that exact
// local address itself. The one home of this rule: the broker and the install preview (a
// remote MCP server's URL, an address literal in a grant) both ask it.
import os from "node:os";
import { performance } from "node:perf_hooks";
import ipaddr from "ipaddr.js";
import type { HostPattern } from "../../kernel/rules/network-grant";

export type AddressVerdict = { ok: true; address: string } | { ok: false; range: string };

/** What a refused address is called when it is one of this machine's own interfaces. */
export const OWN_ADDRESS = "an address of this machine";

/** Ranges an explicit address grant may open: the owner consented to that one local host. */
const GRANTABLE_PRIVATE = new Set(["loopback", "private", "uniqueLocal", "carrierGradeNat"]);

/**
 * An address in one canonical text (IPv4 dotted quad; IPv6 RFC 5952, lower case, shortest),
 * whatever form it came in: IPv4-mapped IPv6 is unwrapped (`::ffff:7f00:1` is 127.0.0.1),
 * and the legacy IPv4 forms inet_aton reads (`127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1`)
 * are the address they mean. A zone (`%eth0`) is dropped: it only scopes a link-local
 * address, which is never dialled. Null when the text is not an address.
 */
export function canonicalAddress(text: string): string | null {
  const bare = text.split("%")[0]!;
  if (!ipaddr.isValid(bare)) return null;
  const parsed = ipaddr.process(bare);
  return parsed.kind() === "ipv6" ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
}

/**
 * How long one read of the interfaces is trusted. Measured on a 2 vCPU machine: reading them
 * costs ~40 us with 3 interfaces and 0.7-1.6 ms with 100 (a host with many containers); a read
 * per connection would cost a flood of connections a core. An address added less than a
 * second before a connection is dialled is the gap this leaves; the host, not the app, decides
 * when its addresses change.
 */
export const OWN_ADDRESSES_MAX_AGE_MS = 1000;
let ownRead: { atMs: number; addresses: ReadonlySet<string> } | null = null;

/**
 * The addresses of this machine's own interfaces (every one: loopback, a VPS's public IPv4,
 * an IPv6 SLAAC address, a LAN address), canonical. A service bound to 0.0.0.0 or :: answers on
 * each, so each is as local as 127.0.0.1. Re-read once the last read is a second old.
 */
export function ownAddresses(): ReadonlySet<string> {
  const now = performance.now();
  if (ownRead !== null && now - ownRead.atMs < OWN_ADDRESSES_MAX_AGE_MS) return ownRead.addresses;
  const addresses = new Set<string>();
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      const canonical = canonicalAddress(entry.address);
      if (canonical !== null) addresses.add(canonical);
    }
  }
  ownRead = { atMs: now, addresses };
  return addresses;
}

/**
 * Whether `address` may be dialled. `explicitlyGranted` is true only when the app's grant
 * names this very address as a literal: then loopback, private, CGNAT, unique-local and this
 * machine's own addresses are the owner's consent. Link-local (metadata services),
 * multicast, broadcast, unspecified and reserved ranges are refused even then.
 */
export function vetAddress(address: string, explicitlyGranted: boolean): AddressVerdict {
  const canonical = canonicalAddress(address);
  if (canonical === null) return { ok: false, range: "not an address" };
  const range = ipaddr.parse(canonical).range();
  if (explicitlyGranted) {
    if (range === "unicast" || GRANTABLE_PRIVATE.has(range)) return { ok: true, address: canonical };
    return { ok: false, range };
  }
  if (range !== "unicast") return { ok: false, range };
  // Public by its range, yet the machine's own: everything listening on 0.0.0.0 or :: is there.
  if (ownAddresses().has(canonical)) return { ok: false, range: OWN_ADDRESS };
  return { ok: true, address: canonical };
}

/**
 * A grant's address literals in canonical form, so that `[2001:DB8::1]`, `[::ffff:7f00:2]`
 * and the address an app writes in another form name the same thing; names stay as they are.
 */
export function canonicalGrant(patterns: readonly HostPattern[]): HostPattern[] {
  return patterns.map((p) => (p.kind === "ip" ? { ...p, host: canonicalAddress(p.host) ?? p.host } : p));
}
