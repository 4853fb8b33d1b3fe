// nginx as the plain reverse-proxy baseline: one worker process (workerd serves from one
// thread), keep-alive to the backend, no access log. Skipped when nginx is not installed.
import { spawn, spawnSync, execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { httpGet, pollUntil, stopChild } from "./procs.mjs";

export function nginxBinary() {
  for (const candidate of ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx", "/usr/local/bin/nginx"]) {
    try {
      execFileSync(candidate, ["-v"], { stdio: "ignore" });
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** `nginx -v` prints its version on stderr. */
export function nginxVersion(binary) {
  const answer = spawnSync(binary, ["-v"], { encoding: "utf8" });
  return `${answer.stdout ?? ""}${answer.stderr ?? ""}`.trim() || null;
}

/** Starts nginx proxying 127.0.0.1:<port> to the backend; waits for the backend's /health through it. */
export async function startNginx({ binary, scratch, port, backendPort }) {
  const dir = join(scratch, "nginx");
  mkdirSync(join(dir, "tmp"), { recursive: true });
  const conf = join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 32; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`,
  );
  const child = spawn(binary, ["-p", dir, "-c", conf, "-e", join(dir, "error.log")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  await pollUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
      return (await httpGet(port, "/health", {}, 1_000)).status === 200;
    },
    { intervalMs: 20, timeoutMs: 10_000, what: "nginx" },
  );
  return { child, port, stop: () => stopChild(child, 5_000) };
}
