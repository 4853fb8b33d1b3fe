// One egress broker per app: an HTTP proxy on a UNIX socket that only that app's sandbox can
// reach (the socket is bind-mounted into it alone, so the socket is the app's identity). It
// accepts `CONNECT host:port` and absolute-form `http://` requests, allows a host only when
// the app's consented grant names it, resolves the name itself, refuses local and special
// addresses and this machine's own, and dials the vetted address (no second lookup: DNS
// rebinding fails).
//
// The HTTP the app sends is parsed by Node's own parser (node:http), the one every Node server
// trusts: request smuggling (Content-Length beside Transfer-Encoding, bare LF, obs-fold, a bad
// chunk size) and header confusion are refused there, not by a parser of ours. A forwarded
// request goes upstream as Node writes it from the parsed message, never as the app's bytes.
import { lookup } from "node:dns/promises";
import { chmodSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { grantAllows, type HostPattern } from "../../kernel/rules/network-grant";
import { canonicalAddress, canonicalGrant, vetAddress } from "./address-policy";
import { loadOriginTrust, secureOrigin, type OriginTrust } from "./origin-tls";
import { OriginConnections } from "./origin-connections";
import type { SecretOrigin } from "../../kernel/contracts/secret-delivery";
import type { PlacedSecret } from "./secret-placeholders";
import { maskedAnswer, secretOriginOf, substituteSecrets, type Needle } from "./secret-substitution";
import { downstreamHeaders, upstreamHeaders } from "./hop-headers";
import { rawAnswer, responseAnswer, type Answer, type EgressCode } from "./refusal-answers";

export type { EgressCode } from "./refusal-answers";

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
  /** The secrets it writes into requests to their origins, with this start's placeholders (secret-substitution.ts). */
  secrets?: readonly PlacedSecret[];
  /** The authorities a secret origin's certificate is verified against; the system's by default. */
  trust?: OriginTrust;
}

const HEAD_LIMIT = 8 * 1024;
const HEAD_TIMEOUT_MS = 10_000;
const NOT_A_PROXY_REQUEST = "only CONNECT host:port and absolute http:// requests are proxied";
interface Target {
  host: string;
  port: number;
}

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6); null when it is not one. */
function connectTarget(authority: string): Target | null {
  const hostPort = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(authority);
  if (!hostPort) return null;
  const port = Number(hostPort[2]);
  if (port < 1 || port > 65535) return null;
  return { host: hostPort[1]!.replace(/^\[|\]$/g, "").toLowerCase(), port };
}

/** The target of an absolute-form `http://` request; null for any other request target. */
function forwardTarget(requestTarget: string): (Target & { url: URL }) | null {
  let url: URL;
  try {
    url = new URL(requestTarget);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" || url.username || url.password || !/^http:\/\//i.test(requestTarget)) return null;
  return { host: url.hostname.replace(/^\[|\]$/g, "").toLowerCase(), port: url.port ? Number(url.port) : 80, url };
}

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}

/** A running broker for one app. */
export interface EgressBroker {
  socketPath: string;
  close(): Promise<void>;
}

/** One app's broker while it runs: its settings, its open sockets and its connections counted. */
interface BrokerState {
  app: string;
  grant: readonly HostPattern[] | "all";
  maxTunnels: number;
  connectTimeoutMs: number;
  resolve: (host: string) => Promise<string[]>;
  onDecision: (decision: EgressDecision) => void;
  secrets: readonly PlacedSecret[];
  trust: OriginTrust | null;
  /** Its kept TLS connections to secret origins. */
  origins: OriginConnections;
  /** Every socket of the broker, destroyed when it closes. */
  open: Set<net.Socket>;
  /** Dialled connections still open, against maxTunnels. */
  tunnels: number;
}

function decide(
  broker: BrokerState,
  target: Target,
  outcome: "allowed" | "refused",
  extra: Partial<EgressDecision> = {},
): void {
  broker.onDecision({ app: broker.app, host: target.host, port: target.port, outcome, ...extra });
}

/** Records the refusal as a decision and answers it. */
function refuse(
  broker: BrokerState,
  answer: Answer,
  target: Target,
  code: EgressCode,
  reason: string,
  address?: string,
): void {
  decide(broker, target, "refused", { code, reason, ...(address !== undefined ? { address } : {}) });
  answer(code, reason);
}

/**
 * The address to dial for `target`, or null once refused (decision and answer made): the grant
 * names it, the app has a connection to spare, and it resolves to an address an app may reach.
 */
async function admit(broker: BrokerState, target: Target, answer: Answer): Promise<string | null> {
  const { grant } = broker;
  const literal = canonicalAddress(target.host);
  const matched = grant === "all" ? null : grantAllows(grant, literal ?? target.host, target.port);
  if (grant !== "all" && !matched) {
    refuse(
      broker,
      answer,
      target,
      "egress_not_declared",
      `${target.host}:${target.port} is not in the app's network grant`,
    );
    return null;
  }
  if (broker.tunnels >= broker.maxTunnels) {
    refuse(broker, answer, target, "egress_busy", `the app already has ${broker.maxTunnels} connections open`);
    return null;
  }
  let candidates: string[];
  if (literal !== null) candidates = [literal];
  else {
    try {
      candidates = await broker.resolve(target.host);
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code ?? "lookup failed";
      refuse(broker, answer, target, "egress_unresolvable", `${target.host} does not resolve (${why})`);
      return null;
    }
  }
  // A name is never trusted to stay public: each address it resolves to is vetted, and only
  // an address literal the grant itself names may be local.
  const explicit = matched?.kind === "ip";
  let refusedRange = "";
  for (const candidate of candidates) {
    const verdict = vetAddress(candidate, explicit);
    if (verdict.ok) return verdict.address;
    refusedRange = `${candidate} is ${verdict.range}`;
  }
  refuse(
    broker,
    answer,
    target,
    "egress_address_refused",
    `${target.host} resolves only to addresses an app may not reach (${refusedRange})`,
    candidates[0],
  );
  return null;
}

/**
 * Dials the vetted address; counts as one of the app's connections until it closes. Calls
 * `connected` with the socket once it is up (the allowed decision), or refuses with
 * egress_connect_failed when it cannot be.
 */
function dial(
  broker: BrokerState,
  target: Target,
  address: string,
  answer: Answer,
  connected: (upstream: net.Socket) => void,
): net.Socket {
  broker.tunnels += 1;
  const upstream = net.connect({
    host: address,
    port: target.port,
    family: net.isIPv6(address) ? 6 : 4,
    noDelay: true,
  });
  broker.open.add(upstream);
  let up = false;
  const timer = setTimeout(() => upstream.destroy(new Error("connect timed out")), broker.connectTimeoutMs);
  upstream.once("close", () => {
    clearTimeout(timer);
    broker.tunnels -= 1;
    broker.open.delete(upstream);
  });
  upstream.on("error", (error) => {
    if (!up)
      refuse(
        broker,
        answer,
        target,
        "egress_connect_failed",
        `${target.host}:${target.port} (${address}): ${error.message}`,
        address,
      );
  });
  upstream.once("connect", () => {
    up = true;
    clearTimeout(timer);
    decide(broker, target, "allowed", { address });
    connected(upstream);
  });
  return upstream;
}

/** `CONNECT host:port`: once admitted and dialled, a tunnel of bytes both ways. */
async function tunnel(broker: BrokerState, req: http.IncomingMessage, client: net.Socket, head: Buffer) {
  broker.open.add(client);
  client.once("close", () => broker.open.delete(client));
  client.on("error", () => client.destroy());
  const target = connectTarget(req.url ?? "");
  if (!target) {
    const nobody = { host: "-", port: 0 };
    return refuse(broker, rawAnswer(client), nobody, "egress_bad_request", NOT_A_PROXY_REQUEST);
  }
  // Held while the target is vetted: what the app sends after its head waits for the tunnel.
  client.pause();
  const answer = rawAnswer(client);
  const address = await admit(broker, target, answer);
  if (address === null || client.destroyed) return void client.resume();
  const upstream = dial(broker, target, address, answer, (socket) => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) socket.write(head);
    client.pipe(socket);
    socket.pipe(client);
    client.resume();
  });
  upstream.on("error", () => client.destroy());
  client.once("close", () => upstream.destroy());
}

/**
 * An absolute-form `http://` request: once admitted and dialled, sent upstream as Node writes it
 * from the parsed message (upstreamHeaders), and the answer relayed back less its hop headers.
 * A request for a secret's origin goes over TLS the broker opens to the origin's real port, its
 * placeholders replaced and the answer masked; a placeholder sent anywhere else is refused
 * before anything is dialled (secret-substitution.ts).
 */
async function forward(broker: BrokerState, req: http.IncomingMessage, res: http.ServerResponse) {
  const answer = responseAnswer(res);
  req.pause();
  const target = forwardTarget(req.url ?? "");
  if (!target) {
    refuse(broker, answer, { host: "-", port: 0 }, "egress_bad_request", NOT_A_PROXY_REQUEST);
    return void req.resume();
  }
  const origin = secretOriginOf(broker.secrets, target);
  const dialled = origin ? { host: target.host, port: origin.port } : target;
  const authority = origin ? new URL(origin.origin).host : target.url.host;
  const path = `${target.url.pathname}${target.url.search}`;
  const plan = substituteSecrets(broker.secrets, origin, dialled, upstreamHeaders(req, authority), path);
  if (!plan.ok) {
    refuse(broker, answer, dialled, plan.code, plan.reason);
    return void req.resume();
  }
  const address = await admit(broker, dialled, answer);
  if (address === null || req.socket.destroyed) return void req.resume();
  if (origin) return sendToOrigin(broker, { req, res, answer, target: dialled }, origin, address, plan);
  const send = (socket: net.Socket) => {
    let forwarded: http.ClientRequest;
    try {
      forwarded = http.request({
        createConnection: () => socket,
        method: req.method,
        path: plan.path,
        headers: plan.headers,
        setHost: false,
      });
    } catch {
      // Node writes no request it would not parse back (a header value it finds invalid).
      socket.destroy();
      return void res.destroy();
    }
    forwarded.on("response", (reply) => relayAnswer(broker, { res, answer, target: dialled }, reply, plan.needles));
    // Once connected, a failure is the upstream's: the app sees its answer end, not a refusal.
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
    req.resume();
  };
  const upstream = dial(broker, dialled, address, answer, send);
  res.once("close", () => upstream.destroy());
}

/** One request's two sides and what a refusal of it answers. */
interface Exchange {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  answer: Answer;
  target: Target;
}

/**
 * A request for a secret's origin: on a kept TLS connection to that origin and vetted address
 * (origin-connections.ts), or a new one dialled here and verified against the owner's trust
 * (egress_tls_failed when it cannot be). A kept connection taken is an allowed decision, as a
 * dialled one is.
 */
function sendToOrigin(
  broker: BrokerState,
  ex: Exchange,
  origin: SecretOrigin,
  address: string,
  plan: { path: string; headers: string[]; needles: Needle[] },
): void {
  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const raw = dial(broker, ex.target, address, ex.answer, (socket) => {
        secureOrigin(socket, origin.host, (broker.trust ??= loadOriginTrust({ extraCaFile: "" }))).then(
          resolve,
          (e) => {
            refuse(
              broker,
              ex.answer,
              ex.target,
              "egress_tls_failed",
              `${origin.origin} (${address}): ${e.message}`,
              address,
            );
            reject(e);
          },
        );
      });
      raw.once("error", reject);
    });
  let forwarded: http.ClientRequest;
  try {
    forwarded = broker.origins.request(
      origin,
      address,
      { method: ex.req.method, path: plan.path, headers: plan.headers },
      connect,
    );
  } catch {
    // Node writes no request it would not parse back (a header value it finds invalid).
    return void ex.res.destroy();
  }
  let answered = false;
  forwarded.on("socket", () => {
    if (forwarded.reusedSocket) decide(broker, ex.target, "allowed", { address });
  });
  forwarded.on("response", (reply) => {
    reply.once("end", () => (answered = true));
    relayAnswer(broker, ex, reply, plan.needles);
  });
  // A refusal already answered stays whole; any other failure ends the app's answer.
  forwarded.on("error", () => {
    if (!ex.res.writableEnded) ex.res.destroy();
  });
  ex.res.once("close", () => {
    if (!answered) forwarded.destroy();
  });
  ex.req.pipe(forwarded);
  ex.req.resume();
}

/** The upstream's answer to the app: as it came, less its hop headers, with every needle masked. */
function relayAnswer(
  broker: BrokerState,
  to: Pick<Exchange, "res" | "answer" | "target">,
  reply: http.IncomingMessage,
  needles: readonly Needle[],
): void {
  const masked = maskedAnswer(reply, downstreamHeaders(reply), needles);
  if (!masked.ok) {
    reply.destroy();
    return refuse(broker, to.answer, to.target, "secret_answer_unmaskable", masked.reason);
  }
  to.res.writeHead(reply.statusCode ?? 502, masked.statusMessage, masked.headers);
  masked.body.pipe(to.res);
}

/** The broker's HTTP server: Node's parser in front of `tunnel` and `forward`, failing closed. */
function proxyServer(broker: BrokerState): http.Server {
  const server = http.createServer({
    maxHeaderSize: HEAD_LIMIT,
    headersTimeout: HEAD_TIMEOUT_MS,
    // The head timeout is checked this often; a forwarded body and a tunnel have no timeout.
    connectionsCheckingInterval: 1000,
    requestTimeout: 0,
    // A CONNECT needs no Host, and an absolute-form request's Host is never used.
    requireHostHeader: false,
  });
  server.on("connection", (socket: net.Socket) => {
    broker.open.add(socket);
    socket.once("close", () => broker.open.delete(socket));
  });
  // A failure nothing above expected (the interfaces unreadable, say) drops the connection:
  // the broker fails closed, and never takes the bridge down with it.
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnel(broker, req, client, head).catch(() => client.destroy());
  });
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    forward(broker, req, res).catch(() => res.destroy());
  });
  // What Node's parser refused, and a head that did not arrive in time.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: net.Socket) => {
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT" || error.code === "ECONNRESET" || !socket.writable)
      return void socket.destroy();
    const reason =
      error.code === "HPE_HEADER_OVERFLOW"
        ? `the request head is longer than ${HEAD_LIMIT} bytes`
        : `${NOT_A_PROXY_REQUEST} (${error.code ?? "unreadable"})`;
    const nobody = { host: "-", port: 0 };
    refuse(broker, rawAnswer(socket), nobody, "egress_bad_request", reason);
  });
  return server;
}

/** Starts the broker of one app; its socket is made 0600 before it is handed to the sandbox. */
export function startBroker(opts: BrokerOptions): Promise<EgressBroker> {
  const broker: BrokerState = {
    app: opts.app,
    grant: opts.grant === "all" ? "all" : canonicalGrant(opts.grant),
    maxTunnels: opts.maxTunnels ?? 64,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    resolve: opts.resolve ?? systemResolve,
    onDecision: opts.onDecision,
    secrets: opts.secrets ?? [],
    trust: opts.trust ?? null,
    origins: new OriginConnections(),
    open: new Set<net.Socket>(),
    tunnels: 0,
  };
  const server = proxyServer(broker);
  return new Promise((resolvePromise, reject) => {
    rmSync(opts.socketPath, { force: true });
    server.once("error", reject);
    server.listen(opts.socketPath, () => {
      chmodSync(opts.socketPath, 0o600);
      resolvePromise({
        socketPath: opts.socketPath,
        close: () =>
          new Promise<void>((done) => {
            broker.origins.close();
            for (const socket of broker.open) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
