// Probes a backend's health endpoint (BACK-19): 127.0.0.1 only, no proxy, no redirects, a
// restricted path. Threat: a manifest healthCheck steering the bridge at another host or
// smuggling a request line (`/health HTTP/1.1\r\nHost: ...`).
import http from "node:http";
import { safeLine } from "../../kernel/text/text-safety.js";

// The manifest contract (BackendSchema.healthCheck) also admits `~`, an unreserved URL character;
// accepting it here keeps an app that passed review from being unhealthy forever.
const HEALTH_PATH = /^\/[A-Za-z0-9/_.~-]*$/;

/** An absolute path made only of [A-Za-z0-9/_.~-], not starting with `//`. */
export function isAcceptableHealthPath(p: string): boolean {
  return HEALTH_PATH.test(p) && !p.startsWith("//");
}

/** Where a backend answers: a loopback port (unconfined) or its slot's socket (confined). */
export type HealthEndpoint = { port: number } | { socketPath: string };

/** A probe's outcome: healthy, or a miss and what the backend did instead, in the owner's words. */
export type HealthAnswer = { ok: true } | { ok: false; miss: string };

/** How much of a refusing answer's body is read for its first line. */
const MISS_BODY_BYTES = 2048;
/** The longest first line kept of it. */
const MISS_LINE_CHARS = 200;

/** What a non-2xx answer said: its status and the first non-empty line of its body, made safe to print. */
function refusingAnswer(status: number | undefined, body: Buffer, masked: readonly string[]): string {
  const line = body
    .toString("utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== "");
  const said = line ? `: ${safeLine(line, masked).slice(0, MISS_LINE_CHARS)}` : "";
  return `answered ${status ?? "without a status"}${said}`;
}

/**
 * Healthy only for a well-formed 2xx answer, whole, within the timeout; a redirect, an error or
 * a malformed response is a miss, and says what happened (the status and the first line of the
 * body of a refusing answer), so a failed start can tell the owner why. The timeout is a
 * deadline on the whole probe, not an idle timer: a stopped (SIGSTOP) backend the kernel still
 * accepts connections for, or one that drips bytes, is a miss within `timeoutMs`, so one probe
 * never outlasts its interval.
 */
export function probeHealth(
  endpoint: HealthEndpoint,
  healthPath: string,
  timeoutMs: number,
  masked: readonly string[] = [],
): Promise<HealthAnswer> {
  if (!isAcceptableHealthPath(healthPath)) return Promise.resolve({ ok: false, miss: "its health path is refused" });
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: HealthAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(answer);
    };
    const deadline = setTimeout(() => {
      req.destroy();
      done({ ok: false, miss: `gave no whole answer within ${timeoutMs} ms` });
    }, timeoutMs);
    // http.request never reads proxy variables and never follows a redirect.
    const where =
      "socketPath" in endpoint ? { socketPath: endpoint.socketPath } : { host: "127.0.0.1", port: endpoint.port };
    const req = http.request({ ...where, path: healthPath, method: "GET", agent: false, timeout: timeoutMs }, (res) => {
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;
      const kept: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        if (ok || size >= MISS_BODY_BYTES) return;
        kept.push(chunk.subarray(0, MISS_BODY_BYTES - size));
        size += Math.min(chunk.length, MISS_BODY_BYTES - size);
      });
      res.once("end", () =>
        done(ok ? { ok: true } : { ok: false, miss: refusingAnswer(res.statusCode, Buffer.concat(kept), masked) }),
      );
      res.once("error", () => done({ ok: false, miss: "broke off its answer" }));
    });
    req.once("timeout", () => {
      req.destroy();
      done({ ok: false, miss: `gave no whole answer within ${timeoutMs} ms` });
    });
    req.once("error", (error: NodeJS.ErrnoException) =>
      done({ ok: false, miss: `could not be reached (${error.code ?? "connection failed"})` }),
    );
    req.end();
  });
}
