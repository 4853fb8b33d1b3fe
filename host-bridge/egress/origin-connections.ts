// The TLS connections a broker keeps open to its app's secret origins between requests: a
// request through the broker otherwise paid a TCP connection and a full TLS handshake each
// time, 20x a request on a connection kept alive (bench section `secrets`). A connection is
// kept for the one origin it was verified for and the one address that was vetted for it, so
// a request is never sent over a connection whose certificate named another origin; it is
// closed after 2 s idle (or sooner when the origin's Keep-Alive says so).
import http from "node:http";
import type net from "node:net";
import type { SecretOrigin } from "../../kernel/contracts/secret-delivery";

/** How long an idle connection to an origin is kept. */
const IDLE_MS = 2000;

/** What a request to an origin carries for its connection: which pool it may take from, and how a new one is opened. */
interface OriginRequestOptions extends http.RequestOptions {
  pool: string;
  connect: () => Promise<net.Socket>;
}

/** One broker's kept connections to its secret origins. */
export class OriginConnections {
  // As many kept as may be open: with fewer, an app making ten requests at once paid a TLS
  // handshake for six of every ten (bench section `secrets`, 10 connections: p50 33 -> 7 ms).
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16, maxFreeSockets: 16, timeout: IDLE_MS });

  constructor() {
    this.agent.getName = (options) => (options as OriginRequestOptions).pool;
    this.agent.createConnection = ((
      options: OriginRequestOptions,
      done: (error: Error | null, socket?: net.Socket) => void,
    ) => {
      options.connect().then(
        (socket) => done(null, socket),
        (error: Error) => done(error),
      );
      return undefined;
    }) as unknown as http.Agent["createConnection"];
  }

  /**
   * A request to `origin` at the vetted `address`, on a kept connection to exactly that pair or
   * one `connect` opens (dialled, vetted and verified by the broker). `reusedSocket` on the
   * answer says which.
   */
  request(
    origin: SecretOrigin,
    address: string,
    message: { method: string | undefined; path: string; headers: string[] },
    connect: () => Promise<net.Socket>,
  ): http.ClientRequest {
    const options: OriginRequestOptions = {
      agent: this.agent,
      host: address,
      port: origin.port,
      method: message.method,
      path: message.path,
      headers: message.headers,
      setHost: false,
      pool: `${origin.origin}|${address}`,
      connect,
    };
    return http.request(options);
  }

  close(): void {
    this.agent.destroy();
  }
}
