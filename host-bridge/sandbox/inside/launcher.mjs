// Runs inside an app's sandbox, in the app's own network namespace, as the parent of the
// app's program. Plain JavaScript on purpose: the bridge runs it with the host's node and it
// must need nothing but node's own modules. It is the only way in and out of the namespace:
//   --listen-fd N --backend-port P   the listening socket the bridge handed down (fd N): a
//                                    Node backend is given it to adopt; for any other program
//                                    the launcher accepts on it and relays each connection to
//                                    the backend on 127.0.0.1:P inside the namespace;
//   --gateway-socket G --gateway-port R  listens on 127.0.0.1:R and relays each connection to
//                                    the gateway's own socket G: how the backend calls the
//                                    gateway back (PERSONALCLAW_PORT);
//   --egress-socket S --egress-port Q  listens on 127.0.0.1:Q and relays each connection to
//                                    the app's egress broker at S (the HTTP(S)_PROXY the app
//                                    is given), which decides what may leave.
// Then it runs the program given after `--`, passes termination signals on, and exits as the
// program did.
import { spawn } from "node:child_process";
import net from "node:net";
import { basename } from "node:path";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const flags = new Map();
for (let i = 0; i < (split < 0 ? argv.length : split); i += 2) flags.set(argv[i], argv[i + 1]);
const [program, ...programArgs] = split < 0 ? [] : argv.slice(split + 1);
if (!program) {
  process.stderr.write("personalclaw launcher: no program after --\n");
  process.exit(64);
}

// Carries one connection both ways until each side has said all it will. An answer ended by
// the backend's close (HTTP/1.0, or no Content-Length) is still queued toward the gateway when
// the backend's side closes: destroying the gateway's side then cut it short (the gateway saw
// a broken answer: 503). So a side that ended or closed only ends the other, which sends what
// is queued first (destroySoon); only an error tears both down at once. `from` is accepted with
// allowHalfOpen, so a client that shuts its writing side after the request still gets the answer.
function relay(from, connectTo, answersBack = (answers, client) => answers.pipe(client)) {
  const to = net.connect({ ...connectTo, allowHalfOpen: true, noDelay: true });
  const fail = () => {
    from.destroy();
    to.destroy();
  };
  from.on("error", fail);
  to.on("error", fail);
  from.on("close", () => to.destroySoon());
  to.on("close", () => from.destroySoon());
  from.pipe(to);
  answersBack(to, from);
}

/**
 * A server that relays each connection it accepts to `connectTo`, with TCP_NODELAY on both the
 * accepted and the dialled socket: a small request or answer waiting on Nagle's algorithm for
 * the next ACK costs tens of milliseconds.
 */
function relayServer(connectTo, answersBack) {
  return net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => relay(socket, connectTo, answersBack));
}

/** The most of an answer's head read before it is passed on as it is. */
const HEAD_LIMIT = 65_536;

/**
 * Passes a backend's answers to the gateway, the first one saying `Connection: close` when it is
 * HTTP/1.0 and does not ask to keep the connection. Such an answer ends the connection (HTTP/1.0
 * keeps none unless asked), but the gateway pools one whose answer does not say so, and sends
 * its next request down it while the backend is closing it: that request failed with 503
 * app_backend_unavailable (Python's http.server answers HTTP/1.0 by default). Nothing else of
 * any answer changes; a head that is not HTTP/1.0 or not whole within HEAD_LIMIT passes as sent.
 */
function sayingHttp10Close(answers, client) {
  let head = Buffer.alloc(0);
  const passOn = (bytes) => {
    answers.off("data", collect);
    answers.off("end", endEarly);
    client.write(bytes);
    answers.pipe(client);
  };
  const collect = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end >= 0) passOn(withCloseSaid(head, end));
    else if (head.length >= HEAD_LIMIT) passOn(head);
  };
  const endEarly = () => client.end(head);
  answers.on("data", collect);
  answers.on("end", endEarly);
}

/** `bytes` (an answer whose head ends at `end`) with `Connection: close` said when HTTP/1.0 implies it. */
function withCloseSaid(bytes, end) {
  const lines = bytes.subarray(0, end).toString("latin1").split("\r\n");
  if (!/^HTTP\/1\.0 /.test(lines[0])) return bytes;
  if (lines.some((line) => /^connection:.*\bkeep-alive\b/i.test(line))) return bytes;
  const kept = lines.filter((line) => !/^connection:/i.test(line));
  return Buffer.concat([Buffer.from(`${[...kept, "Connection: close"].join("\r\n")}`, "latin1"), bytes.subarray(end)]);
}

// A Node backend adopts the listening socket itself (node-listen.cjs): no relay on the request
// path. Any other program listens on its port and the launcher relays each connection to it.
const listenFd = flags.has("--listen-fd") ? Number(flags.get("--listen-fd")) : null;
const handsOver = listenFd !== null && /^node(js)?$/.test(basename(program));
const childEnv = { ...process.env };
if (handsOver) {
  childEnv.PERSONALCLAW_LISTEN_FD = String(listenFd);
  childEnv.NODE_OPTIONS = `${childEnv.NODE_OPTIONS ? `${childEnv.NODE_OPTIONS} ` : ""}--require ${new URL("./node-listen.cjs", import.meta.url).pathname}`;
} else if (listenFd !== null) {
  const port = Number(flags.get("--backend-port"));
  relayServer({ host: "127.0.0.1", port }, sayingHttp10Close)
    .on("error", (error) => process.stderr.write(`personalclaw launcher: ${error.message}\n`))
    .listen({ fd: listenFd });
}
if (flags.has("--gateway-socket")) {
  const socketPath = flags.get("--gateway-socket");
  relayServer({ path: socketPath })
    .on("error", (error) => process.stderr.write(`personalclaw launcher: gateway relay: ${error.message}\n`))
    .listen(Number(flags.get("--gateway-port")), "127.0.0.1");
}
if (flags.has("--egress-socket")) {
  const socketPath = flags.get("--egress-socket");
  relayServer({ path: socketPath })
    .on("error", (error) => process.stderr.write(`personalclaw launcher: egress relay: ${error.message}\n`))
    .listen(Number(flags.get("--egress-port")), "127.0.0.1");
}

// The program's stdout and stderr are pipes of its own, which the launcher copies to its own
// (the bridge's log relay drains those). Handed the launcher's own descriptors, it shared their
// non-blocking mode: a burst of logging met EAGAIN once the pipe was full (Python raises
// BlockingIOError), failing the request that logged. Its own pipes block, as a program expects;
// pipe() waits for the bridge when it falls behind. stdin stays inherited (an MCP server's
// protocol arrives there, and nothing here reads it).
const stdio = ["inherit", "pipe", "pipe"];
if (handsOver) stdio[listenFd] = listenFd;
const child = spawn(program, programArgs, { stdio: Array.from(stdio, (entry) => entry ?? "ignore"), env: childEnv });
child.stdout.pipe(process.stdout);
child.stderr.pipe(process.stderr);
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  process.stderr.write(`personalclaw launcher: could not start ${program}: ${error.message}\n`);
  process.exit(127);
});
// Exits as the program did once what it wrote has been passed on ('close': its pipes ended), or
// a second after it ended when a process it left behind still holds them.
let exitCode = null;
const exitAsProgram = () => process.exit(exitCode ?? 1);
child.on("exit", (code, signal) => {
  exitCode = code ?? 128 + (signal ? (signalNumbers[signal] ?? 1) : 1);
  setTimeout(exitAsProgram, 1000);
});
child.on("close", exitAsProgram);
const signalNumbers = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGTERM: 15, SIGABRT: 6 };
