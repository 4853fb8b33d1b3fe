// How this machine reaches its edge: by the edge's own name, or through PERSONALCLAW_EDGE_CONNECT_TO
// (host:port of a tunnel) while TLS still checks the certificate against the edge's name.
import { rootCertificates } from "node:tls";
import { Agent, buildConnector } from "undici";

/**
 * An undici dispatcher that connects to `connectTo` instead of the resolved address (undefined for
 * the default); `ca` adds a trusted certificate (PEM) to the system's for this dispatcher only;
 * `idleMs` bounds how long an idle connection is kept for the next request (undici's default if
 * not given): a caller pausing between requests passes a short one, so no request goes out on a
 * connection the server is closing as idle; 0 opens a connection for each request and closes it
 * after the answer, so no request ever races a server closing the connection it would reuse.
 */
export function edgeDispatcher(connectTo: string, ca?: string, idleMs?: number): Agent | undefined {
  if (connectTo === "") return undefined;
  const colon = connectTo.lastIndexOf(":");
  const hostname = connectTo.slice(0, colon).replace(/^\[|\]$/g, "");
  const port = connectTo.slice(colon + 1);
  if (colon <= 0 || !/^\d{1,5}$/.test(port))
    throw new Error(`PERSONALCLAW_EDGE_CONNECT_TO must be host:port, not ${JSON.stringify(connectTo.slice(0, 80))}`);
  const connector = buildConnector(ca === undefined ? {} : { ca: [...rootCertificates, ca] });
  return new Agent({
    ...(idleMs === undefined
      ? {}
      : idleMs === 0
        ? { pipelining: 0 }
        : { keepAliveTimeout: idleMs, keepAliveMaxTimeout: idleMs }),
    connect: (options, callback) =>
      connector({ ...options, hostname, port, servername: options.servername ?? options.hostname }, callback),
  });
}
