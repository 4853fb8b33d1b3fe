// Which addresses an app's egress may dial. Threat: a granted name that resolves (or is made
// to resolve, by DNS rebinding) to the owner's own machine, LAN, router or a cloud metadata
// service turns "api.example.com" into a way into everything local. Only public unicast
// addresses are dialled, unless the grant names that exact private address itself.
import ipaddr from "ipaddr.js";

export type AddressVerdict = { ok: true; address: string } | { ok: false; range: string };

/** Ranges an explicit address grant may open: the owner consented to that one local host. */
const GRANTABLE_PRIVATE = new Set(["loopback", "private", "uniqueLocal", "carrierGradeNat"]);

/** An address in canonical text, IPv4-mapped IPv6 unwrapped; null when it is not an address. */
export function canonicalAddress(text: string): string | null {
  if (!ipaddr.isValid(text)) return null;
  const parsed = ipaddr.process(text); // unwraps ::ffff:a.b.c.d, so a mapped loopback is loopback
  return parsed.kind() === "ipv6" ? parsed.toNormalizedString() : parsed.toString();
}

/**
 * Whether `address` may be dialled. `explicitlyGranted` is true only when the app's grant
 * names this very address as a literal; link-local (metadata services), multicast,
 * broadcast, unspecified and reserved ranges are refused even then.
 */
export function vetAddress(address: string, explicitlyGranted: boolean): AddressVerdict {
  const canonical = canonicalAddress(address);
  if (canonical === null) return { ok: false, range: "not an address" };
  const range = ipaddr.parse(canonical).range();
  if (range === "unicast") return { ok: true, address: canonical };
  if (explicitlyGranted && GRANTABLE_PRIVATE.has(range)) return { ok: true, address: canonical };
  return { ok: false, range };
}
