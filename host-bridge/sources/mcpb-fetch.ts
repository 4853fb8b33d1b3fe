// Reads the bytes of an .mcpb bundle the owner named: a file on this machine, or an https://
// URL fetched under the egress address rules (vetted-fetch.ts: a name that resolves to this
// machine or the LAN is refused; such an address is reached only when the URL names it as a
// literal, and then plain http:// is accepted too, as for a package source). A redirect (release
// downloads redirect to a file host) is followed at most five times, each new URL held to the
// same rules and vetted against the owner's own URL, never from https:// down to http://. The
// bytes are read once, whole, within the bundle cap: what is hashed is what is unpacked.
import { open } from "node:fs/promises";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { MCPB_CAPS } from "./mcpb-archive";
import type { McpbSource } from "./mcpb-app";
import { vettedFetch, type VettedFetchOptions } from "./vetted-fetch";

/** True when `text` names an .mcpb bundle: an http(s) URL, or a path ending in .mcpb. */
export function isMcpbLocation(text: string): boolean {
  return /^https?:\/\//i.test(text) || /\.mcpb$/i.test(text);
}

/** Why an http(s) URL is not one a bundle is fetched from, or null. */
function urlRefusal(url: URL): string | null {
  if (url.username !== "" || url.password !== "") return "a URL with credentials in it is not fetched";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && isIP(url.hostname.replace(/^\[|\]$/g, "")) !== 0) return null;
  return "only https:// is fetched (plain http:// only from a literal address)";
}

async function fetchBundle(location: string, opts: Partial<VettedFetchOptions>): Promise<Buffer> {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new GatewayError("source_spec_invalid", {
      vars: { spec: location.slice(0, 300), reason: "it is not a URL" },
    });
  }
  const refusal = urlRefusal(url);
  if (refusal)
    throw new GatewayError("source_spec_invalid", { vars: { spec: location.slice(0, 300), reason: refusal } });
  // The URL is the owner's source unless a source the owner named is given (an MCP Registry's, for
  // a bundle its entry names): a literal local address is reached only where the owner wrote it.
  const source = opts.source ?? url.href;
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const answer = await vettedFetch(current.href, { ...opts, source, maxBytes: MCPB_CAPS.maxBundleBytes });
    if (answer.status === 200) return answer.bytes;
    if (!REDIRECT_STATUSES.has(answer.status) || answer.location === undefined)
      throw new GatewayError("source_unreachable", {
        vars: { source: current.origin, reason: `it answered ${answer.status}` },
      });
    current = redirectTarget(current, answer.location, redirects);
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/** Where a redirect leads, held to the rules of the first URL; never from https:// down to http://. */
function redirectTarget(from: URL, location: string, redirects: number): URL {
  const refuse = (reason: string) => new GatewayError("source_unreachable", { vars: { source: from.origin, reason } });
  if (redirects >= MAX_REDIRECTS) throw refuse(`it redirected more than ${MAX_REDIRECTS} times`);
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw refuse("it redirected to something that is not a URL");
  }
  const refusal = urlRefusal(next);
  if (refusal) throw refuse(`it redirected to ${next.origin}, where ${refusal}`);
  if (from.protocol === "https:" && next.protocol !== "https:") throw refuse("it redirected from https:// to http://");
  return next;
}

async function readBundleFile(path: string): Promise<Buffer> {
  const unreadable = (reason: string) =>
    new GatewayError("source_unreachable", { vars: { source: path.slice(0, 300), reason } });
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw unreadable((error as NodeJS.ErrnoException).code ?? "it cannot be opened");
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw unreadable("it is not a file");
    if (stat.size > MCPB_CAPS.maxBundleBytes)
      throw new GatewayError("mcpb_too_large", {
        vars: { reason: `the file is larger than ${MCPB_CAPS.maxBundleBytes} bytes` },
      });
    // Read from the one open file, up to the cap plus one byte: a file that grows meanwhile is caught.
    const bytes = Buffer.alloc(stat.size + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(bytes, length, bytes.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > stat.size) throw unreadable("it changed while it was read");
    }
    return bytes.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/** The bundle named by `location` (relative paths from `cwd`), read once and whole. */
export async function readMcpbSource(
  location: string,
  cwd: string,
  fetchOptions: Partial<VettedFetchOptions> = {},
): Promise<McpbSource> {
  if (/^https?:\/\//i.test(location)) return { source: location, bytes: await fetchBundle(location, fetchOptions) };
  return { source: location, bytes: await readBundleFile(resolve(cwd, location)) };
}
