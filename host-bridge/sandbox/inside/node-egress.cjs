// Preloaded into every Node program in an app's sandbox that has a network grant
// (NODE_OPTIONS=--require): sends node's http, https and fetch through the app's egress
// relay (HTTPS_PROXY) with no code from the app's author. Node 20's http modules and fetch do
// not read proxy variables themselves. Plain JavaScript, node's own modules only.
"use strict";
const http = require("node:http");
const https = require("node:https");
const net = require("node:net");
const tls = require("node:tls");

const proxy = new URL(process.env.HTTPS_PROXY || process.env.https_proxy || "http://127.0.0.1:3128");
const bypass = new Set(["localhost", "127.0.0.1", "::1"]);

/** Opens a CONNECT tunnel to host:port through the relay; calls back with the raw socket. */
function tunnel(host, port, callback) {
  const socket = net.connect(Number(proxy.port), proxy.hostname);
  let head = "";
  const onData = (chunk) => {
    head += chunk.toString("latin1");
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    socket.off("data", onData);
    const status = head.slice(0, head.indexOf("\r\n"));
    if (!/^HTTP\/1\.[01] 200/.test(status)) {
      const code = /X-PersonalClaw-Egress: (\S+)/i.exec(head);
      socket.destroy();
      return callback(
        Object.assign(new Error(`egress refused ${host}:${port}: ${status}${code ? ` (${code[1]})` : ""}`), {
          code: code ? code[1] : "EGRESS_REFUSED",
        }),
      );
    }
    const rest = Buffer.from(head.slice(end + 4), "latin1");
    if (rest.length > 0) socket.unshift(rest);
    callback(null, socket);
  };
  socket.on("data", onData);
  socket.once("error", (error) => callback(error));
  socket.write(`CONNECT ${host.includes(":") ? `[${host}]` : host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
}

class TunnelingAgent extends http.Agent {
  constructor(secure) {
    super({ keepAlive: false });
    this.secure = secure;
    this.defaultPort = secure ? 443 : 80;
    this.protocol = secure ? "https:" : "http:";
  }
  createConnection(options, callback) {
    const host = options.hostname || options.host || "localhost";
    const port = Number(options.port) || this.defaultPort;
    if (bypass.has(host)) {
      const direct = this.secure
        ? tls.connect({ ...options, host, port, servername: options.servername || host })
        : net.connect(port, host);
      return direct;
    }
    tunnel(host, port, (error, socket) => {
      if (error) return callback(error);
      if (!this.secure) return callback(null, socket);
      const secured = tls.connect({ ...options, socket, servername: options.servername || host });
      secured.once("secureConnect", () => callback(null, secured));
      secured.once("error", (e) => callback(e));
    });
    return undefined;
  }
}

const httpAgent = new TunnelingAgent(false);
const httpsAgent = new TunnelingAgent(true);
http.globalAgent = httpAgent;
https.globalAgent = httpsAgent;

// A plain http:// request goes to the relay in absolute form (`GET http://host/path`), not
// through a tunnel: the broker then reads its head, and for a secret's origin opens TLS itself
// and writes the secret where its placeholder is (docs/design/settings-and-secrets.md).
const plainAgent = new http.Agent({ keepAlive: false });
const requestDirect = http.request;

/** http.request's (url?, options?, callback?) as one options object and the callback. */
function requestOptions(args) {
  const [first, second, third] = args;
  if (typeof first === "string" || first instanceof URL) {
    const url = new URL(String(first));
    const fromUrl = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port,
      path: `${url.pathname}${url.search}`,
      ...(url.username ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
    };
    return typeof second === "function"
      ? { options: fromUrl, callback: second }
      : { options: { ...fromUrl, ...(second || {}) }, callback: third };
  }
  return { options: { ...(first || {}) }, callback: second };
}

http.request = function request(...args) {
  const { options, callback } = requestOptions(args);
  const host = options.hostname || (options.host || "localhost").replace(/:\d+$/, "");
  if ((options.protocol && options.protocol !== "http:") || options.socketPath || bypass.has(host))
    return requestDirect.apply(http, args);
  const port = Number(options.port) || 80;
  const authority = `${host.includes(":") ? `[${host}]` : host}${port === 80 ? "" : `:${port}`}`;
  const headers = Array.isArray(options.headers) ? options.headers : { ...(options.headers || {}) };
  if (!Array.isArray(headers) && !Object.keys(headers).some((name) => name.toLowerCase() === "host"))
    headers.host = authority;
  return requestDirect.call(
    http,
    {
      ...options,
      protocol: "http:",
      host: proxy.hostname,
      hostname: proxy.hostname,
      port: Number(proxy.port),
      path: `http://${authority}${options.path || "/"}`,
      headers,
      agent: options.agent === undefined || options.agent === httpAgent ? plainAgent : options.agent,
    },
    callback,
  );
};
http.get = function get(...args) {
  const req = http.request(...args);
  req.end();
  return req;
};

// fetch: the common forms (a URL or string, method, headers, a string/Buffer/URLSearchParams body), answered as a Response.
if (typeof globalThis.fetch === "function") {
  globalThis.fetch = function egressFetch(input, init = {}) {
    const request = typeof Request !== "undefined" && input instanceof Request ? input : null;
    const url = new URL(request ? request.url : String(input));
    const method = (init.method || (request && request.method) || "GET").toUpperCase();
    const headers = new Headers(init.headers || (request && request.headers) || {});
    let body = init.body;
    if (body instanceof URLSearchParams) {
      if (!headers.has("content-type")) headers.set("content-type", "application/x-www-form-urlencoded;charset=UTF-8");
      body = body.toString();
    }
    const transport = url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        { method, headers: Object.fromEntries(headers), ...(url.protocol === "https:" ? { agent: httpsAgent } : {}) },
        (res) => {
          const chunks = [];
          res.on("data", (c) => chunks.push(c));
          res.on("end", () => {
            const out = new Headers();
            for (const [k, v] of Object.entries(res.headers))
              for (const one of [].concat(v)) out.append(k, String(one));
            const status = res.statusCode || 502;
            resolve(
              new Response([101, 204, 205, 304].includes(status) ? null : Buffer.concat(chunks), {
                status,
                statusText: res.statusMessage,
                headers: out,
              }),
            );
          });
          res.on("error", reject);
        },
      );
      req.on("error", (error) => reject(new TypeError("fetch failed", { cause: error })));
      if (init.signal) init.signal.addEventListener("abort", () => req.destroy(new Error("aborted")), { once: true });
      if (body !== undefined && body !== null)
        req.write(typeof body === "string" || body instanceof Uint8Array ? body : String(body));
      req.end();
    });
  };
}
