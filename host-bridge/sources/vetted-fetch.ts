// Fetches from a package source under the egress address rules (egress/address-policy.ts, the
// one home of that rule). Threat: a source URL, or a name in it that resolves (or is made to
// resolve, by DNS rebinding) to this machine, the LAN or a metadata service, would turn
// `apps add` into a way to read local services. So the name is resolved here, every address
// vetted, and the connection dialled to the vetted address itself (no second lookup). A local
// address is reached only when the owner's source URL names that very address as a literal.
// Redirects are not followed here: a redirect is a new URL, and a caller that follows one
// (mcpb-fetch.ts) fetches it again through this function, vetted like the first.
import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { GatewayError } from "../../kernel/contracts/errors";
import { canonicalAddress, vetAddress } from "../egress/address-policy";

export interface VettedFetchOptions {
  /** The owner's source URL: only a literal address it names itself may be local. */
  source: string;
  /** The answer is refused once it grows past this many bytes. */
  maxBytes: number;
  accept?: string;
  timeoutMs?: number;
  /** Name resolution; the system resolver by default. */
  resolve?: (host: string) => Promise<string[]>;
}

export interface FetchedBody {
  status: number;
  bytes: Buffer;
  /** The Location header of the answer, when it has one. */
  location?: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}

/** The address `url` may be dialled at, or a refusal naming the source. */
async function vettedAddress(url: URL, opts: VettedFetchOptions): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const named = new URL(opts.source);
  const namedHost = named.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) {
    // A literal is the owner's consent only when it is the literal (and port) of their own source URL.
    const granted =
      isIP(namedHost) !== 0 && canonicalAddress(namedHost) === canonicalAddress(host) && named.port === url.port;
    const verdict = vetAddress(host, granted);
    if (!verdict.ok)
      throw new GatewayError("source_address_refused", {
        vars: { source: url.origin, address: host, range: verdict.range },
      });
    return verdict.address;
  }
  let addresses: string[];
  try {
    addresses = await (opts.resolve ?? systemResolve)(host);
  } catch (error) {
    throw new GatewayError("source_unreachable", {
      vars: { source: url.origin, reason: `its name does not resolve (${(error as Error).message})` },
      cause: error,
    });
  }
  let refused: { address: string; range: string } | null = null;
  for (const address of addresses) {
    const verdict = vetAddress(address, false);
    if (verdict.ok) return verdict.address;
    refused ??= { address, range: verdict.range };
  }
  throw refused
    ? new GatewayError("source_address_refused", { vars: { source: url.origin, ...refused } })
    : new GatewayError("source_unreachable", { vars: { source: url.origin, reason: "its name has no address" } });
}

/** GETs `target` from a vetted address; any status is an answer, a network failure a source_unreachable. */
export async function vettedFetch(target: string, opts: VettedFetchOptions): Promise<FetchedBody> {
  const url = new URL(target);
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new GatewayError("source_unreachable", { vars: { source: url.origin, reason: "it is not http(s)" } });
  const address = await vettedAddress(url, opts);
  const client = url.protocol === "https:" ? https : http;
  return new Promise<FetchedBody>((resolve, reject) => {
    const fail = (reason: string) =>
      reject(new GatewayError("source_unreachable", { vars: { source: url.origin, reason } }));
    const request = client.request(
      url,
      {
        method: "GET",
        headers: { accept: opts.accept ?? "*/*", "user-agent": "personalclaw" },
        // The vetted address, never a second lookup; TLS still checks the certificate of the name.
        lookup: (_host, options, callback) => {
          const family = isIP(address);
          if ((options as { all?: boolean }).all) callback(null, [{ address, family }] as never, family);
          else callback(null, address, family);
        },
        timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) {
            response.destroy();
            fail(`the answer is larger than ${opts.maxBytes} bytes`);
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            bytes: Buffer.concat(chunks),
            ...(typeof response.headers.location === "string" ? { location: response.headers.location } : {}),
          }),
        );
        response.on("error", (error) => fail(error.message));
      },
    );
    request.on("timeout", () => request.destroy(new Error("it did not answer in time")));
    request.on("error", (error) => fail(error.message));
    request.end();
  });
}
