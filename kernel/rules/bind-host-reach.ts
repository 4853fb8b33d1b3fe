// What a gateway.bind_host value lets reach the gateway, and the one rule for when a new value
// widens that reach. A change loosens by its meaning, not by its old value: moving from a LAN
// address to 0.0.0.0 (every IPv4 interface) or to :: (every interface, IPv4 included on a
// dual-stack socket) opens the gateway to networks it was not on, as surely as leaving loopback.

/** The interfaces a bind host reaches, from narrowest to widest. */
export type BindReach =
  { kind: "loopback" } | { kind: "one"; host: string } | { kind: "every-ipv4" } | { kind: "every-interface" };

const IPV4_LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
// inet_aton reads "0", "0.0" and "0.0.0" as 0.0.0.0 too.
const IPV4_ANY = /^0+(?:\.0+){0,3}$/;
const IPV6_ANY = /^[0:]*$/;
const IPV6_LOOPBACK = /^[0:]*:0*1$/;
const IPV4_MAPPED_LOOPBACK = /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** The reach of one bind host value (case and an IPv6 literal's spelling of zeros do not matter). */
export function bindReach(value: string): BindReach {
  const host = value.trim().toLowerCase();
  if (host === "localhost" || IPV4_LOOPBACK.test(host) || IPV4_MAPPED_LOOPBACK.test(host)) return { kind: "loopback" };
  if (IPV4_ANY.test(host)) return { kind: "every-ipv4" };
  if (host.includes(":") && IPV6_ANY.test(host)) return { kind: "every-interface" };
  if (host.includes(":") && IPV6_LOOPBACK.test(host)) return { kind: "loopback" };
  return { kind: "one", host };
}

/** True when every interface `to` reaches was already reached by `from` (loopback always was). */
function reachWithin(to: BindReach, from: BindReach): boolean {
  if (to.kind === "loopback" || from.kind === "every-interface") return true;
  if (from.kind === "every-ipv4") return to.kind === "every-ipv4" || (to.kind === "one" && isIpv4Literal(to.host));
  if (from.kind === "one") return to.kind === "one" && to.host === from.host;
  return false;
}

function isIpv4Literal(host: string): boolean {
  return /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * The loosening predicate of gateway.bind_host: true when `to` lets the gateway be reached on
 * an interface `from` did not (loopback to a LAN address, a LAN address to another one or to
 * 0.0.0.0, 0.0.0.0 to ::, a host name whose addresses are not known here).
 */
export function bindHostWidens(from: string, to: string): boolean {
  return !reachWithin(bindReach(to), bindReach(from));
}
