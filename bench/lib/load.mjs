// Runs one load measurement in a child process (bench/lib/load-child.mjs), so the load comes
// from a second process on loopback; bounded by its duration plus 30 s.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./workerd.mjs";

/** target: {id, port, path, headers?, sign?}; answers the child's JSON result. */
export function runLoad(target, { connections, duration, warmup }) {
  const opts = {
    origin: `http://127.0.0.1:${target.port}`,
    path: target.path,
    headers: target.headers ?? {},
    sign: target.sign ?? null,
    connections,
    duration,
    warmup,
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "bench", "lib", "load-child.mjs"), JSON.stringify(opts)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), (duration + warmup + 30) * 1000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`load run for ${target.id} failed (${code}): ${err}`));
      resolvePromise(JSON.parse(out.trim().split("\n").pop()));
    });
  });
}
