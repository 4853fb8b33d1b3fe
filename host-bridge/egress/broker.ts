// One egress broker per app: an HTTP proxy on a UNIX socket that only that app's sandbox can
// reach (the socket is bind-mounted into it alone, so the socket is the app's identity). It
// accepts `CONNECT host:port` and absolute-form `http://` requests, allows a host only when
// the app's consented grant names it, resolves the name itself, refuses local and special
// addresses, and dials the vetted address (no second lookup: DNS rebinding fails).
import { lookup } from "node:dns/promises";
import { chmodSync, rmSync } from "node:fs";
import net from "node:net";
import { grantAllows, type HostPattern } from "../../workers/contracts/network-grant";
import { canonicalAddress, vetAddress } from "./address-policy";

export type EgressCode =
  | "egress_not_declared"
  | "egress_address_refused"
  | "egress_unresolvable"
  | "egress_connect_failed"
  | "egress_busy"
  | "egress_bad_request";

export interface EgressDecision {
  app: string;
  host: string;
  port: number;
  /** The address dialled or refused, when one was resolved. */
  address?: string;
  outcome: "allowed" | "refused";
  code?: EgressCode;
  reason?: string;
}

export interface BrokerOptions {
  app: string;
  /** The host patterns the owner consented to; `all` lets any public host through (never a local one). */
  grant: readonly HostPattern[] | "all";
  socketPath: string;
  onDecision: (decision: EgressDecision) => void;
  maxTunnels?: number;
  connectTimeoutMs?: number;
  /** Name resolution; the system resolver by default. */
  resolve?: (host: string) => Promise<string[]>;
}

const HEAD_LIMIT = 8 * 1024;
const HEAD_TIMEOUT_MS = 10_000;
const STATUS: Record<EgressCode, string> = {
  egress_not_declared: "403 Forbidden",
  egress_address_refused: "403 Forbidden",
  egress_unresolvable: "502 Bad Gateway",
  egress_connect_failed: "502 Bad Gateway",
  egress_busy: "429 Too Many Requests",
  egress_bad_request: "400 Bad Request",
};

interface Target {
  host: string;
  port: number;
  /** For an absolute-form request, the head to send upstream (origin-form, Connection: close). */
  forwardHead?: Buffer;
}

/** Parses the request head; null when it is neither CONNECT nor an absolute http:// request. */
export function parseProxyHead(head: string): Target | null {
  const lines = head.split("\r\n");
  const match = /^([A-Z]{3,10}) (\S+) HTTP\/1\.[01]$/.exec(lines[0] ?? "");
  if (!match) return null;
  const [, method, target] = match as unknown as [string, string, string];
  if (method === "CONNECT") {
    const hostPort = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(target);
    if (!hostPort) return null;
    const port = Number(hostPort[2]);
    if (port < 1 || port > 65535) return null;
    return { host: hostPort[1]!.replace(/^\[|\]$/g, "").toLowerCase(), port };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" || url.username || url.password) return null;
  const kept = lines.slice(1).filter((line) => line !== "" && !/^(proxy-[a-z-]+|connection|keep-alive):/i.test(line));
  const forwardHead = Buffer.from(
    [`${method} ${url.pathname}${url.search} HTTP/1.1`, ...kept, "Connection: close", "", ""].join("\r\n"),
    "latin1",
  );
  return {
    host: url.hostname.replace(/^\[|\]$/g, "").toLowerCase(),
    port: url.port ? Number(url.port) : 80,
    forwardHead,
  };
}

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}

/** A running broker for one app. */
export interface EgressBroker {
  socketPath: string;
  close(): Promise<void>;
}

/** Starts the broker of one app; its socket is made 0600 before it is handed to the sandbox. */
export function startBroker(opts: BrokerOptions): Promise<EgressBroker> {
  const maxTunnels = opts.maxTunnels ?? 64;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
  const resolve = opts.resolve ?? systemResolve;
  const open = new Set<net.Socket>();
  let tunnels = 0;

  const refuse = (
    client: net.Socket,
    target: { host: string; port: number },
    code: EgressCode,
    reason: string,
    address?: string,
  ) => {
    opts.onDecision({ app: opts.app, host: target.host, port: target.port, address, outcome: "refused", code, reason });
    const body = `${code}: ${reason}\n`;
    client.end(
      `HTTP/1.1 ${STATUS[code]}\r\nContent-Type: text/plain\r\nX-PersonalClaw-Egress: ${code}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const handle = async (client: net.Socket, head: string, rest: Buffer) => {
    const target = parseProxyHead(head);
    if (!target)
      return refuse(
        client,
        { host: "-", port: 0 },
        "egress_bad_request",
        "only CONNECT host:port and absolute http:// requests are proxied",
      );
    const literal = canonicalAddress(target.host);
    const matched = opts.grant === "all" ? null : grantAllows(opts.grant, literal ?? target.host, target.port);
    if (opts.grant !== "all" && !matched)
      return refuse(
        client,
        target,
        "egress_not_declared",
        `${target.host}:${target.port} is not in the app's network grant`,
      );
    if (tunnels >= maxTunnels)
      return refuse(client, target, "egress_busy", `the app already has ${maxTunnels} connections open`);
    let candidates: string[];
    if (literal !== null) candidates = [literal];
    else {
      try {
        candidates = await resolve(target.host);
      } catch (error) {
        return refuse(
          client,
          target,
          "egress_unresolvable",
          `${target.host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "lookup failed"})`,
        );
      }
    }
    // A name is never trusted to stay public: each address it resolves to is vetted, and only
    // an address literal the grant itself names may be local.
    const explicit = matched?.kind === "ip";
    let address: string | null = null;
    let refusedRange = "";
    for (const candidate of candidates) {
      const verdict = vetAddress(candidate, explicit);
      if (verdict.ok) {
        address = verdict.address;
        break;
      }
      refusedRange = `${candidate} is ${verdict.range}`;
    }
    if (address === null)
      return refuse(
        client,
        target,
        "egress_address_refused",
        `${target.host} resolves only to addresses an app may not reach (${refusedRange})`,
        candidates[0],
      );
    tunnels += 1;
    const upstream = net.connect({ host: address, port: target.port, family: net.isIPv6(address) ? 6 : 4 });
    open.add(upstream);
    let settled = false;
    let connected = false;
    const timer = setTimeout(() => upstream.destroy(new Error("connect timed out")), connectTimeoutMs);
    const done = () => {
      if (settled) return;
      settled = true;
      tunnels -= 1;
      open.delete(upstream);
    };
    upstream.once("close", done);
    upstream.once("error", (error) => {
      clearTimeout(timer);
      if (!connected)
        refuse(
          client,
          target,
          "egress_connect_failed",
          `${target.host}:${target.port} (${address}): ${error.message}`,
          address!,
        );
      else client.destroy();
    });
    upstream.once("connect", () => {
      connected = true;
      clearTimeout(timer);
      opts.onDecision({ app: opts.app, host: target.host, port: target.port, address: address!, outcome: "allowed" });
      if (target.forwardHead) upstream.write(target.forwardHead);
      else client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    client.once("close", () => upstream.destroy());
  };

  const server = net.createServer((client) => {
    open.add(client);
    client.once("close", () => open.delete(client));
    client.on("error", () => client.destroy());
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => client.destroy(), HEAD_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buffered.length > HEAD_LIMIT) {
          clearTimeout(timer);
          client.off("data", onData);
          refuse(
            client,
            { host: "-", port: 0 },
            "egress_bad_request",
            `the request head is longer than ${HEAD_LIMIT} bytes`,
          );
        }
        return;
      }
      clearTimeout(timer);
      client.off("data", onData);
      client.pause();
      const head = buffered.subarray(0, end).toString("latin1");
      void handle(client, head, buffered.subarray(end + 4)).finally(() => client.resume());
    };
    client.on("data", onData);
  });

  return new Promise((resolvePromise, reject) => {
    rmSync(opts.socketPath, { force: true });
    server.once("error", reject);
    server.listen(opts.socketPath, () => {
      chmodSync(opts.socketPath, 0o600);
      resolvePromise({
        socketPath: opts.socketPath,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of open) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
