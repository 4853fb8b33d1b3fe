// One load run, in its own process so the load comes from a second process on loopback:
// autocannon's API, bounded by duration, answering one JSON line on stdout. With `sign`, every
// request carries a fresh X-PersonalClaw-Proxy signature made from the app's secret file, so a
// baseline that skips the gateway still runs the backend's full verification and route.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import autocannon from "autocannon";

const opts = JSON.parse(process.argv[2]);
const EMPTY_BODY_SHA256 = createHash("sha256").update("").digest("hex");

function signer({ secretFile, method, target }) {
  const key = Buffer.from(readFileSync(secretFile, "utf8").trim(), "utf8");
  return () => {
    const ts = Math.floor(Date.now() / 1000);
    const nonce = randomBytes(16).toString("hex");
    const mac = createHmac("sha256", key)
      .update(`${ts}:${nonce}:${method}:${target}:${EMPTY_BODY_SHA256}`)
      .digest("hex");
    return `${ts}:${nonce}:${mac}`;
  };
}

const sign = opts.sign ? signer(opts.sign) : null;
const request = { method: "GET", path: opts.path, headers: opts.headers ?? {} };
if (sign) request.setupRequest = (req) => ({ ...req, headers: { ...req.headers, "x-personalclaw-proxy": sign() } });

// autocannon's own histogram keeps whole milliseconds; loopback latencies are below that, so
// every 2xx response time (hrtime, fractional ms) is kept and the percentiles taken exactly.
function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

async function runOnce(durationS, keep) {
  const times = [];
  const instance = autocannon({
    url: opts.origin,
    connections: opts.connections,
    duration: durationS,
    timeout: 10,
    requests: [request],
  });
  if (keep) {
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) times.push(responseTime);
    });
  }
  const result = await instance;
  return { result, times };
}

if (opts.warmup > 0) await runOnce(opts.warmup, false);
const { result, times } = await runOnce(opts.duration, true);
times.sort((a, b) => a - b);
const round = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    ok: times.length,
    rps: times.length / result.duration,
    p50: round(percentile(times, 0.5)),
    p90: round(percentile(times, 0.9)),
    p99: round(percentile(times, 0.99)),
    max: round(times.length === 0 ? null : times[times.length - 1]),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
  })}\n`,
);
