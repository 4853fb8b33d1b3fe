// The events section's load: N sockets held open, a publisher POSTing E events a second for D
// seconds, each frame stamped with its send time; latency is receive time minus that stamp,
// per frame per socket. Also a one-socket echo round trip (the floor of any WebSocket path).
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import { cpuMeter } from "./procs.mjs";
import { openWebSocket } from "./ws-client.mjs";

const now = () => performance.timeOrigin + performance.now();

function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function post(agent, port, path, headers, body) {
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      },
    );
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

/**
 * Opens `sockets` sockets to `wsPath` with `wsHeaders`, then publishes `rate` events/s for
 * `durationS` s through POST `publishPath` (body from `bodyOf(i, t)`). Answers p50/p99 delivery
 * latency (ms), frames delivered per second, and how many of the expected frames arrived.
 */
export async function measureFanout({
  port,
  wsPath,
  wsHeaders,
  publishPath,
  publishHeaders,
  bodyOf,
  sockets,
  rate,
  durationS,
  serverPid = null,
}) {
  const opened = [];
  for (let i = 0; i < sockets; i++) {
    const answer = await openWebSocket(port, wsPath, wsHeaders);
    if (!answer.ok) throw new Error(`socket ${i} refused: ${answer.status} ${answer.body}`);
    opened.push(answer.socket);
  }
  const latencies = new Float64Array(Math.ceil(sockets * rate * durationS * 1.05) + 1000);
  let received = 0;
  let measuring = true;
  for (const socket of opened) {
    socket.onText((text) => {
      if (!measuring) return;
      const at = text.indexOf('"t":');
      if (at < 0) return;
      const t = parseFloat(text.slice(at + 4));
      if (received < latencies.length) latencies[received] = now() - t;
      received++;
    });
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const total = rate * durationS;
  const clientCpu = process.cpuUsage();
  const serverCpu = serverPid === null ? null : cpuMeter([serverPid]);
  const started = now();
  let sent = 0;
  let refusedPublishes = 0;
  const inFlight = new Set();
  // Paced in 10 ms ticks so the rate holds without a burst at the start of every second.
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((now() - started) / 1000) * rate));
      while (sent < due) {
        const i = sent++;
        const p = post(agent, port, publishPath, publishHeaders, bodyOf(i, now()));
        inFlight.add(p);
        p.then((status) => {
          if (status !== 200) refusedPublishes++;
        }).finally(() => inFlight.delete(p));
      }
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  await Promise.all(inFlight);
  await new Promise((r) => setTimeout(r, 500));
  measuring = false;
  const elapsedS = (now() - started) / 1000;
  const used = process.cpuUsage(clientCpu);
  const clientCpuShare = (used.user + used.system) / 1e6 / elapsedS;
  const serverCpuNs = serverCpu === null ? null : serverCpu.ns();
  const serverCpuShare = serverCpuNs === null ? null : serverCpuNs / 1e9 / elapsedS;
  const sample = Array.from(latencies.subarray(0, Math.min(received, latencies.length))).sort((a, b) => a - b);
  await Promise.all(opened.map((s) => s.close()));
  agent.destroy();
  return {
    p50: quantile(sample, 0.5),
    p99: quantile(sample, 0.99),
    framesPerS: received / elapsedS,
    delivered: received,
    expected: sockets * total,
    refusedPublishes,
    clientCpuShare,
    serverCpuShare,
    /** The server's CPU per frame delivered to a socket, in µs. */
    serverCpuUsPerFrame: serverCpuNs === null || received === 0 ? null : serverCpuNs / 1000 / received,
  };
}

/** One socket, `n` messages sent one after another to an echoing server: round trip p50/p99 (ms). */
export async function measureEcho({ port, wsPath, n }) {
  const answer = await openWebSocket(port, wsPath, {});
  if (!answer.ok) throw new Error(`echo socket refused: ${answer.status}`);
  const socket = answer.socket;
  let resolveOne = null;
  socket.onText(() => resolveOne?.());
  const rtts = [];
  for (let i = 0; i < n; i++) {
    const t = now();
    await new Promise((resolve) => {
      resolveOne = resolve;
      socket.send(`{"type":"echo","data":{"i":${i}}}`);
    });
    rtts.push(now() - t);
  }
  await socket.close();
  rtts.sort((a, b) => a - b);
  return { p50: quantile(rtts, 0.5), p99: quantile(rtts, 0.99) };
}
