// Process and loopback helpers for the bench: free ports, bounded polling, resident memory
// from /proc, and stopping only the children the bench itself started.
import { createServer } from "node:net";
import { request } from "node:http";
import { readFileSync, readdirSync } from "node:fs";

/** A port the kernel says is free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

/** One GET on loopback through node:http; never throws, answers status 0 on a connection error. */
export function httpGet(port, path, headers = {}, timeoutMs = 5_000) {
  return new Promise((resolvePromise) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "GET",
        headers: { connection: "close", ...headers },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () =>
          resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolvePromise({ status: 0, body: "" }));
    req.end();
  });
}

/** Polls until `probe()` is truthy; bounded by count and time. Answers the value or throws. */
export async function pollUntil(probe, { intervalMs, timeoutMs, what }) {
  const until = Date.now() + timeoutMs;
  const maxTries = Math.ceil(timeoutMs / Math.max(1, intervalMs)) + 1;
  for (let i = 0; i < maxTries && Date.now() <= until; i++) {
    const value = await probe();
    if (value) return value;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

/** Resident set size in KiB (VmRSS of /proc/<pid>/status), or 0 when the process is gone. */
export function rssKiB(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Time the process has spent on a CPU and waiting for one while runnable, in ns, summed over its
 * threads (/proc/<pid>/task/<tid>/schedstat). On a shared machine CPU time per request moves
 * far less than requests per second, and the waiting time says how much of a stall was the
 * machine's run queue rather than the process's own work.
 */
export function schedNs(pid) {
  let onCpu = 0;
  let waiting = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
      onCpu += run;
      waiting += wait;
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return { onCpu, waiting };
}

/** Clock ticks per second of /proc/<pid>/stat's CPU fields (USER_HZ, 100 on Linux). */
const TICK_NS = 1e9 / 100;

/**
 * CPU time of a process from /proc/<pid>/stat, in ns: its own (utime + stime) and, separately,
 * that of the children it has reaped (cutime + cstime: a finished `npm ci`, a CLI command, a
 * backend stopped). Ticks of 10 ms: right for work of seconds, too coarse for one request.
 * Null when the process is gone.
 */
export function statCpuNs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { own: (Number(f[11]) + Number(f[12])) * TICK_NS, reaped: (Number(f[13]) + Number(f[14])) * TICK_NS };
  } catch {
    return null;
  }
}

/**
 * A process's CPU time in ns so far: its live threads' on-CPU time (schedstat, exact) plus what
 * its reaped children used (stat ticks). The one measure every section's "CPU per unit" reads.
 */
export function processCpuNs(pid) {
  const stat = statCpuNs(pid);
  if (stat === null) return null;
  return schedNs(pid).onCpu + stat.reaped;
}

/**
 * Meters the CPU the processes `pids` (and the children they reap meanwhile) use from now on;
 * `ns()` answers the total so far, `byPid()` each one's. A process gone by then counts what it
 * used until its last reading. The bench's own process is `process.pid`.
 */
export function cpuMeter(pids) {
  const start = new Map();
  const last = new Map();
  for (const pid of pids) {
    const at = processCpuNs(pid);
    if (at !== null) {
      start.set(pid, at);
      last.set(pid, at);
    }
  }
  const byPid = () => {
    const out = {};
    for (const [pid, at] of start) {
      const now = processCpuNs(pid);
      if (now !== null) last.set(pid, now);
      out[pid] = Math.max(0, last.get(pid) - at);
    }
    return out;
  };
  return { byPid, ns: () => Object.values(byPid()).reduce((sum, x) => sum + x, 0) };
}

function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** Every live descendant of `root` (children, grandchildren, ...). */
export function descendants(root) {
  const children = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const parent = parentOf(Number(name));
    if (parent === null) continue;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(Number(name));
  }
  const out = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0 && out.length < 10_000) {
    const pid = queue.shift();
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Sends SIGTERM to a child the bench started, SIGKILL after `graceMs`; resolves when it exited. */
export function stopChild(child, graceMs = 10_000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolvePromise();
    });
    child.kill("SIGTERM");
  });
}

/** Milliseconds since `start` (a process.hrtime.bigint()). */
export function msSince(start) {
  return Number(process.hrtime.bigint() - start) / 1e6;
}
