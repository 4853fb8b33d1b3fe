// The `permissions.network` grant: the hosts an app's children may reach through its egress
// broker, and nothing else. Shared by the manifest check, the review and the broker, so the
// pattern the owner consents to is the pattern the broker matches. Imports nothing but zod.
import { z } from "zod";

/** One label of a DNS name (letters, digits, inner hyphens). */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export interface HostPattern {
  /** `exact`: the name itself; `subdomains`: `*.suffix`, any one or more labels before it, never the suffix alone; `ip`: an address literal. */
  kind: "exact" | "subdomains" | "ip";
  /** Lower-case name (for subdomains, the suffix without `*.`) or the address as written. */
  host: string;
  /** A port, or "any" for `:*`; 443 when the pattern names none. */
  port: number | "any";
}

/** Parses `api.example.com`, `*.example.com:8443`, `127.0.0.2:*`, `[::1]:80`; null with a reason otherwise. */
export function parseHostPattern(pattern: string): HostPattern | { error: string } {
  let rest = pattern.trim();
  if (rest !== pattern || rest.length === 0 || rest.length > 260)
    return { error: "must be a host name, `*.` and a name, or an address, optionally with `:port`" };
  let port: number | "any" = 443;
  let host: string;
  if (rest.startsWith("[")) {
    const end = rest.indexOf("]");
    if (end < 0) return { error: "an IPv6 address must be written in brackets, e.g. [2001:db8::1]:443" };
    host = rest.slice(1, end).toLowerCase();
    rest = rest.slice(end + 1);
    if (!/^[0-9a-f:.]+$/.test(host) || !host.includes(":")) return { error: "is not an IPv6 address" };
    if (rest !== "" && !rest.startsWith(":")) return { error: "only `:port` may follow the address" };
    rest = rest.slice(1);
  } else {
    const colon = rest.lastIndexOf(":");
    host = (colon >= 0 ? rest.slice(0, colon) : rest).toLowerCase();
    rest = colon >= 0 ? rest.slice(colon + 1) : "";
  }
  if (rest !== "") {
    if (rest === "*") port = "any";
    else if (/^\d{1,5}$/.test(rest) && Number(rest) >= 1 && Number(rest) <= 65535) port = Number(rest);
    else return { error: "the port must be 1-65535 or *" };
  }
  if (pattern.startsWith("[")) return { kind: "ip", host, port };
  if (IPV4.test(host)) return { kind: "ip", host, port };
  if (/^\d+(\.\d+)*$/.test(host)) return { error: "is a malformed IPv4 address" };
  const wildcard = host.startsWith("*.");
  const name = wildcard ? host.slice(2) : host;
  const labels = name.split(".");
  if (labels.some((label) => !LABEL.test(label)))
    return {
      error: "is not a host name (letters, digits and hyphens, dot separated; a wildcard only as the first label `*.`)",
    };
  // `*.com` would hand an app a whole top-level domain: a wildcard needs a name of two labels at least.
  if (wildcard && labels.length < 2)
    return { error: "a wildcard must cover one name of at least two labels, e.g. *.example.com" };
  return { kind: wildcard ? "subdomains" : "exact", host: name, port };
}

const HostPatternText = z.string().superRefine((value, ctx) => {
  const parsed = parseHostPattern(value);
  if ("error" in parsed) ctx.addIssue({ code: "custom", message: `${JSON.stringify(value)} ${parsed.error}` });
});

/** `permissions.network`: false (or absent) for no network at all, or the host patterns the app may reach. */
export const NetworkGrantSchema = z.union([z.literal(false), z.array(HostPatternText).max(64)]);
export type NetworkGrant = z.infer<typeof NetworkGrantSchema>;

/**
 * The hosts an app's children may reach, as the owner consented to them: the manifest's
 * `permissions.network` (none for false or absent). The one reading of an app's grant: the
 * backend's broker, an MCP server's launch and the owner's http MCP entries all take it from here.
 */
export function appNetworkGrant(manifest: { permissions?: { network?: unknown } }): string[] {
  const grant = manifest.permissions?.network;
  if (!Array.isArray(grant)) return [];
  return grant.filter((text): text is string => typeof text === "string" && !("error" in parseHostPattern(text)));
}

/** The patterns of a grant (none for false or absent). */
export function grantPatterns(grant: NetworkGrant | undefined): HostPattern[] {
  if (!Array.isArray(grant)) return [];
  return grant.map((text) => parseHostPattern(text)).filter((p): p is HostPattern => !("error" in p));
}

/** True when `host:port` (host lower-case, an IPv6 address without brackets) is named by one of the patterns. */
export function grantAllows(patterns: readonly HostPattern[], host: string, port: number): HostPattern | null {
  const name = host.toLowerCase().replace(/\.$/, "");
  for (const p of patterns) {
    if (p.port !== "any" && p.port !== port) continue;
    if (p.kind === "ip" && p.host === name) return p;
    if (p.kind === "exact" && p.host === name) return p;
    if (p.kind === "subdomains" && name.endsWith(`.${p.host}`)) return p;
  }
  return null;
}
