// An app that declares no storage, for the suites of an update whose old version keeps answering
// through the health gate: a Node backend that answers every request with its version, and
// whose health check answers 503 for a while after it starts (or 500 with a reason, always).
import { mkdir, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunningGateway } from "./gateway";
import { sleep } from "./probe-app";

export const BESIDE = "beside";

/** The backend's source: healthy `healthyAfterMs` after it starts, or never (`sick`: 500 with that first line). */
function besideServer(version: string, opts: { healthyAfterMs?: number; sick?: string }): string {
  return `import http from "node:http";
const VERSION = ${JSON.stringify(version)};
const HEALTHY_AFTER_MS = ${opts.healthyAfterMs ?? 0};
const SICK = ${opts.sick === undefined ? "null" : JSON.stringify(opts.sick)};
const started = Date.now();
http
  .createServer((req, res) => {
    if (req.url === "/health") {
      if (SICK !== null) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(SICK + "\\n  at migrate (server.mjs:1)\\n");
        return;
      }
      const ready = Date.now() - started >= HEALTHY_AFTER_MS;
      res.writeHead(ready ? 200 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify({ ready }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ version: VERSION }));
  })
  .listen(Number(process.env.PORT), "127.0.0.1", () => console.log("beside " + VERSION + " listening"));
`;
}

/** Writes version `version` of the app under root and answers its folder. */
export async function writeBeside(
  root: string,
  version: string,
  opts: {
    healthyAfterMs?: number;
    sick?: string;
    storage?: boolean;
    /** The backend's own start timeout (backend.startTimeoutSeconds): an update's gate. */
    startTimeoutSeconds?: number;
  } = {},
): Promise<string> {
  const dir = join(root, `beside-${version}`);
  await mkdir(dir, { recursive: true });
  const manifest = {
    name: BESIDE,
    version,
    displayName: "Beside",
    description: "Answers its version; keeps no data.",
    backend: {
      command: "node",
      args: ["server.mjs"],
      entryPoint: "server.mjs",
      healthCheck: "/health",
      ...(opts.startTimeoutSeconds ? { startTimeoutSeconds: opts.startTimeoutSeconds } : {}),
    },
    permissions: { api: [`/api/apps/${BESIDE}/`], ...(opts.storage ? { storage: true } : {}) },
  };
  await writeFile(join(dir, "app.json"), JSON.stringify(manifest, null, 2));
  await writeFile(join(dir, "server.mjs"), besideServer(version, opts));
  return dir;
}

/** One answer of the app through the gateway's proxy: its status and the version that answered. */
export async function besideAnswer(gw: RunningGateway): Promise<{ status: number; version: string | null }> {
  try {
    const response = await gw.fetch(`/apps/${BESIDE}/api/version`);
    const body = (await response.json().catch(() => null)) as { version?: string } | null;
    return { status: response.status, version: body?.version ?? null };
  } catch {
    return { status: 0, version: null };
  }
}

/** One answer as countAnswers keeps it: when it came (Date.now()), its status and version. */
export type TimedAnswer = { at: number; status: number; version: string | null };

/** Asks the app one request after another until stopped; answers every answer, in order. */
export function countAnswers(gw: RunningGateway): { stop: () => Promise<TimedAnswer[]> } {
  const seen: TimedAnswer[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      seen.push({ ...(await besideAnswer(gw)), at: Date.now() });
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return seen;
    },
  };
}

/** Waits until the gateway log shows that `version`'s backend listens (its first line on stdout). */
export async function waitForListening(home: string, version: string, timeoutMs = 60_000): Promise<void> {
  const log = join(home, "logs", "gateway.log");
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(log) && readFileSync(log, "utf8").includes(`beside ${version} listening`)) return;
    await sleep(50);
  }
  throw new Error(`beside ${version} never said it listens`);
}
