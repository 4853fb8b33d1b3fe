// Preloaded into a Node backend in its sandbox (NODE_OPTIONS=--require). It does in the
// backend's own process what the launcher does for other programs, so a Node backend starts
// without a second Node process in front of it:
//   PERSONALCLAW_LISTEN_FD   the backend's first listen() on $PORT adopts the slot's listening
//                            socket the bridge handed down, instead of binding a port;
//   PERSONALCLAW_GATEWAY_SOCKET + _RELAY_PORT  127.0.0.1:<port> relays to the gateway's socket
//                            (how the backend calls the gateway back);
//   PERSONALCLAW_EGRESS_SOCKET  127.0.0.1:3128 relays to the app's egress broker.
// A program the backend starts inherits NODE_OPTIONS but not the listening socket: the
// variables are removed once read, and a relay port already taken is left to its first owner.
// Plain JavaScript, node's own modules only.
"use strict";
const net = require("node:net");

const env = process.env;
const fd = Number(env.PERSONALCLAW_LISTEN_FD);
const port = Number(env.PORT);
const gatewaySocket = env.PERSONALCLAW_GATEWAY_SOCKET;
const gatewayPort = Number(env.PERSONALCLAW_GATEWAY_RELAY_PORT);
const egressSocket = env.PERSONALCLAW_EGRESS_SOCKET;
for (const name of [
  "PERSONALCLAW_LISTEN_FD",
  "PERSONALCLAW_GATEWAY_SOCKET",
  "PERSONALCLAW_GATEWAY_RELAY_PORT",
  "PERSONALCLAW_EGRESS_SOCKET",
])
  delete env[name];

function relay(from, path) {
  const to = net.connect(path);
  const end = () => {
    from.destroy();
    to.destroy();
  };
  for (const s of [from, to]) {
    s.on("error", end);
    s.on("close", end);
  }
  from.pipe(to);
  to.pipe(from);
}

function relayServer(listenPort, path) {
  const server = net.createServer((socket) => relay(socket, path));
  server.on("error", () => server.close()); // taken: the backend's parent process holds it
  server.listen(listenPort, "127.0.0.1");
  server.unref(); // never what keeps the backend alive
}

if (gatewaySocket && Number.isInteger(gatewayPort) && gatewayPort > 0) relayServer(gatewayPort, gatewaySocket);
if (egressSocket) relayServer(3128, egressSocket);

if (Number.isInteger(fd) && fd > 2 && Number.isInteger(port)) {
  const listen = net.Server.prototype.listen;
  let adopted = false;
  net.Server.prototype.listen = function listenOnSlot(...args) {
    const first = args[0];
    const asked = first !== null && typeof first === "object" ? first.port : first;
    if (adopted || Number(asked) !== port) return listen.apply(this, args);
    adopted = true;
    const callback = args.find((arg) => typeof arg === "function");
    return callback ? listen.call(this, { fd }, callback) : listen.call(this, { fd });
  };
}
