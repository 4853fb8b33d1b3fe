// The requests the broker and secrets sections compare, each one GET answered with 2 bytes:
// through the product's egress broker (absolute form, a CONNECT tunnel per request or kept, TLS
// the broker originates for a placeholder secret, the app's own TLS through CONNECT) and the same
// request made directly, without the broker. Every TCP connection a client opens here has
// TCP_NODELAY set, as the broker sets it on the connections it dials; the broker's own socket is
// a UNIX socket, where Nagle's algorithm does not apply.
import http from "node:http";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";

/** Answers when a response with status 200 has been read to its end; rejects on anything else. */
function sendAndDrain(req, resolvePromise, reject) {
  req.on("response", (res) => {
    res.resume();
    res.on("end", () => (res.statusCode === 200 ? resolvePromise() : reject(new Error(`status ${res.statusCode}`))));
  });
  req.on("error", reject);
  req.end();
}

/** One GET through the broker's socket in absolute form; `agent` decides whether the app's connection to the broker is kept. */
export function forwardedRequest(agent, socketPath, url, headers = {}) {
  return new Promise((resolvePromise, reject) =>
    sendAndDrain(http.request({ socketPath, path: url, headers, agent }), resolvePromise, reject),
  );
}

/** One GET through the broker's socket in absolute form, the placeholder in its header; a fresh connection each time. */
export function originatedRequest(socketPath, url, placeholder) {
  return forwardedRequest(false, socketPath, url, { authorization: `Bearer ${placeholder}` });
}

/** An agent for plain HTTP straight to the origin, TCP_NODELAY set; keepAlive reuses its connections. */
export function directAgent(keepAlive) {
  const agent = new http.Agent({ keepAlive, maxSockets: 64 });
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (options, callback) => create({ ...options, noDelay: true }, callback);
  return agent;
}

/** One plain GET to host:port over `agent`, without the broker. */
export function directRequest(agent, host, port) {
  return new Promise((resolvePromise, reject) =>
    sendAndDrain(http.request({ host, port, path: "/", agent }), resolvePromise, reject),
  );
}

/** A CONNECT tunnel through the broker's socket to host:port: calls back with the socket once the broker answered 200. */
function connectTunnel(socketPath, host, port, callback) {
  const socket = net.connect(socketPath);
  let head = "";
  const onData = (chunk) => {
    head += chunk.toString("latin1");
    if (!head.includes("\r\n\r\n")) return;
    socket.off("data", onData);
    if (!head.startsWith("HTTP/1.1 200")) return callback(new Error(head.split("\r\n")[0]));
    callback(null, socket);
  };
  socket.on("data", onData);
  socket.once("error", callback);
  socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
}

/** An agent whose connections are plain CONNECT tunnels through the broker; keepAlive reuses them. */
export function plainTunnelAgent(socketPath, host, port, keepAlive) {
  const agent = new http.Agent({ keepAlive, maxSockets: 64 });
  agent.createConnection = (_options, callback) => {
    connectTunnel(socketPath, host, port, callback);
    return undefined;
  };
  return agent;
}

/** An agent whose connections are CONNECT tunnels with the app's own TLS, verified against `ca`; keepAlive reuses them. */
export function tunnellingAgent(socketPath, host, port, ca, keepAlive) {
  const agent = new https.Agent({ keepAlive, maxSockets: 64 });
  agent.createConnection = (_options, callback) => {
    connectTunnel(socketPath, host, port, (error, socket) => {
      if (error) return callback(error);
      const secured = tls.connect({ socket, host, ca, ALPNProtocols: ["http/1.1"] });
      secured.setNoDelay(true);
      secured.once("secureConnect", () => callback(null, secured));
      secured.once("error", callback);
    });
    return undefined;
  };
  return agent;
}

/** One GET with the app's own TLS through a CONNECT tunnel (`agent` decides whether the tunnel is reused). */
export function tunnelledRequest(agent, host, port) {
  return new Promise((resolvePromise, reject) =>
    sendAndDrain(
      https.request({ host, port, path: "/", agent, headers: { authorization: "Bearer held-by-app" } }),
      resolvePromise,
      reject,
    ),
  );
}

/** Plain GETs to the plain origin through a proxy's socket: absolute form, or CONNECT tunnels (kept or not). */
const forwardWay = (socketPath, at) =>
  agentWay(new http.Agent({ keepAlive: true, maxSockets: 64 }), (a) =>
    forwardedRequest(a, socketPath, `http://${at.host}:${at.plainPort}/`),
  );
const tunnelWay = (socketPath, at, keepAlive) =>
  agentWay(plainTunnelAgent(socketPath, at.host, at.plainPort, keepAlive), (a) =>
    directRequest(a, at.host, at.plainPort),
  );
const tlsTunnelWay = (at, keepAlive) =>
  agentWay(tunnellingAgent(at.socketPath, at.host, at.tlsPort, at.ca, keepAlive), (a) =>
    tunnelledRequest(a, at.host, at.tlsPort),
  );

/**
 * The ways of making the request, by name, given where the broker and the origins are
 * (`at`: socketPath, bareSocketPath, host, plainPort, tlsPort, ca, placeholder); the bare- ways go
 * through the bare Node proxy instead of the broker. Each answers {request, close}.
 */
export const WAYS = {
  "direct-fresh": (at) => agentWay(directAgent(false), (a) => directRequest(a, at.host, at.plainPort)),
  "direct-kept": (at) => agentWay(directAgent(true), (a) => directRequest(a, at.host, at.plainPort)),
  "broker-forward": (at) => forwardWay(at.socketPath, at),
  "connect-fresh": (at) => tunnelWay(at.socketPath, at, false),
  "connect-kept": (at) => tunnelWay(at.socketPath, at, true),
  "bare-forward": (at) => forwardWay(at.bareSocketPath, at),
  "bare-connect-fresh": (at) => tunnelWay(at.bareSocketPath, at, false),
  "bare-connect-kept": (at) => tunnelWay(at.bareSocketPath, at, true),
  originated: (at) => ({
    request: () => originatedRequest(at.socketPath, `http://${at.host}:${at.tlsPort}/`, at.placeholder),
    close: () => {},
  }),
  "tunnelled-fresh": (at) => tlsTunnelWay(at, false),
  "tunnelled-kept": (at) => tlsTunnelWay(at, true),
};

function agentWay(agent, send) {
  return { request: () => send(agent), close: () => agent.destroy() };
}
