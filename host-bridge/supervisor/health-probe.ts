// Probes a backend's health endpoint (BACK-19): 127.0.0.1 only, no proxy, no redirects, a
// restricted path. Threat: a manifest healthCheck steering the bridge at another host or
// smuggling a request line (`/health HTTP/1.1\r\nHost: ...`).
import http from "node:http";

// The manifest contract (BackendSchema.healthCheck) also admits `~`, an unreserved URL character;
// accepting it here keeps an app that passed review from being unhealthy forever.
const HEALTH_PATH = /^\/[A-Za-z0-9/_.~-]*$/;

/** An absolute path made only of [A-Za-z0-9/_.~-], not starting with `//`. */
export function isAcceptableHealthPath(p: string): boolean {
  return HEALTH_PATH.test(p) && !p.startsWith("//");
}

/** Where a backend answers: a loopback port (unconfined) or its slot's socket (confined). */
export type HealthEndpoint = { port: number } | { socketPath: string };

/**
 * True only for a well-formed 2xx answer, whole, within the timeout; a redirect, an error or a
 * malformed response is a miss. The timeout is a deadline on the whole probe, not an idle
 * timer: a stopped (SIGSTOP) backend the kernel still accepts connections for, or one that
 * drips bytes, is a miss within `timeoutMs`, so one probe never outlasts its interval.
 */
export function probeHealth(endpoint: HealthEndpoint, healthPath: string, timeoutMs: number): Promise<boolean> {
  if (!isAcceptableHealthPath(healthPath)) return Promise.resolve(false);
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(ok);
    };
    const deadline = setTimeout(() => {
      req.destroy();
      done(false);
    }, timeoutMs);
    // http.request never reads proxy variables and never follows a redirect.
    const where =
      "socketPath" in endpoint ? { socketPath: endpoint.socketPath } : { host: "127.0.0.1", port: endpoint.port };
    const req = http.request({ ...where, path: healthPath, method: "GET", agent: false, timeout: timeoutMs }, (res) => {
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
      res.resume();
      res.once("end", () => done(ok));
      res.once("error", () => done(false));
    });
    req.once("timeout", () => {
      req.destroy();
      done(false);
    });
    req.once("error", () => done(false));
    req.end();
  });
}
