// Preloaded into a Node backend in its sandbox (NODE_OPTIONS=--require) when the launcher hands
// it its slot's listening socket: the backend's first listen() on $PORT adopts that socket
// (PERSONALCLAW_LISTEN_FD) instead of binding a port, so the gateway's requests reach it with
// no relay in between. Any other listen() is left alone. Plain JavaScript, node's modules only.
"use strict";
const net = require("node:net");

const fd = Number(process.env.PERSONALCLAW_LISTEN_FD);
const port = Number(process.env.PORT);
delete process.env.PERSONALCLAW_LISTEN_FD; // a program this backend starts must not adopt it too
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
