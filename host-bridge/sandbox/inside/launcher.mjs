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

function relay(from, connectTo) {
  const to = net.connect(connectTo);
  const end = () => {
    from.destroy();
    to.destroy();
  };
  from.on("error", end);
  to.on("error", end);
  from.on("close", end);
  to.on("close", end);
  from.pipe(to);
  to.pipe(from);
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
  net
    .createServer((socket) => relay(socket, { host: "127.0.0.1", port }))
    .on("error", (error) => process.stderr.write(`personalclaw launcher: ${error.message}\n`))
    .listen({ fd: listenFd });
}
if (flags.has("--gateway-socket")) {
  const socketPath = flags.get("--gateway-socket");
  net
    .createServer((socket) => relay(socket, { path: socketPath }))
    .on("error", (error) => process.stderr.write(`personalclaw launcher: gateway relay: ${error.message}\n`))
    .listen(Number(flags.get("--gateway-port")), "127.0.0.1");
}
if (flags.has("--egress-socket")) {
  const socketPath = flags.get("--egress-socket");
  net
    .createServer((socket) => relay(socket, { path: socketPath }))
    .on("error", (error) => process.stderr.write(`personalclaw launcher: egress relay: ${error.message}\n`))
    .listen(Number(flags.get("--egress-port")), "127.0.0.1");
}

const stdio = ["inherit", "inherit", "inherit"];
if (handsOver) stdio[listenFd] = listenFd;
const child = spawn(program, programArgs, { stdio: Array.from(stdio, (entry) => entry ?? "ignore"), env: childEnv });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  process.stderr.write(`personalclaw launcher: could not start ${program}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? (signalNumbers[signal] ?? 1) : 1)));
const signalNumbers = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGTERM: 15, SIGABRT: 6 };
