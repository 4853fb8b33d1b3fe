// The probe app of the lifecycle suites: a Python backend that writes rows into data/app.db all
// the time, and what those suites read of it (its record, its rows, its answers, the log).
import { expect } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { RunningGateway } from "./gateway";
import { waitForRow } from "./backends";

export type Json = Record<string, any>;
export const APP = "probe";

// The probe: a Python backend that inserts one row per few milliseconds into data/app.db (WAL
// mode, each row committed) and, on SIGTERM, a last "stopped" row naming the last seq it wrote.
export function probeServer(version: string, opts: { broken?: boolean; sick?: string } = {}): string {
  return `import json, os, signal, sqlite3, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
VERSION = ${JSON.stringify(version)}
SICK = ${opts.sick === undefined ? "None" : JSON.stringify(opts.sick)}
${opts.broken ? "sys.stderr.write('probe: this version cannot start\\n')\nsys.exit(7)\n" : ""}
DATA = os.environ["PERSONALCLAW_APP_DATA_DIR"]
db = sqlite3.connect(os.path.join(DATA, "app.db"), check_same_thread=False, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, version TEXT, seq INTEGER, kind TEXT)")
lock = threading.Lock()
state = {"seq": db.execute("SELECT COALESCE(MAX(seq), 0) FROM rows WHERE version = ? AND kind = 'row'", (VERSION,)).fetchone()[0], "stop": False}
def writer():
    while not state["stop"]:
        with lock:
            if state["stop"]:
                break
            state["seq"] += 1
            db.execute("INSERT INTO rows (version, seq, kind) VALUES (?, ?, 'row')", (VERSION, state["seq"]))
        time.sleep(0.004)
def stop(*_):
    with lock:
        state["stop"] = True
        db.execute("INSERT INTO rows (version, seq, kind) VALUES (?, ?, 'stopped')", (VERSION, state["seq"]))
        db.close()
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if SICK is not None and self.path == "/health":
            body = (SICK + "\\n  File \\"server.py\\", line 1\\n").encode()
            self.send_response(500)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        with lock:
            count = 0 if state["stop"] else db.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
        body = json.dumps({"version": VERSION, "rows": count, "secret": bool(os.environ.get("PROBE_API_KEY"))}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
threading.Thread(target=writer, daemon=True).start()
ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
`;
}

export function probeManifest(version: string, extra: Json = {}): Json {
  return {
    name: APP,
    version,
    displayName: "Probe",
    description: "Writes rows into data/app.db all the time.",
    backend: { command: "python3", args: ["server.py"], entryPoint: "server.py", healthCheck: "/health" },
    permissions: { api: [`/api/apps/${APP}/`], storage: true, memory: false, network: false, ...extra },
  };
}

export async function writeProbe(
  root: string,
  version: string,
  opts: {
    broken?: boolean;
    sick?: string;
    permissions?: Json;
    secrets?: Json[];
    mcpServers?: Json;
    /** The backend's own start timeout (backend.startTimeoutSeconds). */
    startTimeoutSeconds?: number;
  } = {},
): Promise<string> {
  const dir = join(
    root,
    `probe-${version}${opts.broken ? "-broken" : ""}${opts.sick ? "-sick" : ""}${opts.permissions ? "-more" : ""}${opts.secrets ? "-secrets" : ""}${opts.mcpServers ? "-mcp" : ""}${opts.startTimeoutSeconds ? `-start${opts.startTimeoutSeconds}` : ""}`,
  );
  await mkdir(dir, { recursive: true });
  const base = probeManifest(version, opts.permissions ?? {});
  const manifest = {
    ...base,
    ...(opts.startTimeoutSeconds
      ? { backend: { ...(base.backend as Json), startTimeoutSeconds: opts.startTimeoutSeconds } }
      : {}),
    ...(opts.secrets ? { secrets: opts.secrets } : {}),
    ...(opts.mcpServers ? { mcpServers: opts.mcpServers } : {}),
  };
  await writeFile(join(dir, "app.json"), JSON.stringify(manifest, null, 2));
  await writeFile(join(dir, "server.py"), probeServer(version, opts));
  return dir;
}

export async function post(gw: RunningGateway, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const response = await gw.fetch(path, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

export async function appRow(gw: RunningGateway): Promise<Json | null> {
  const response = await gw.fetch(`/api/apps/${APP}`);
  if (response.status === 404) return null;
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

/** The rows of the probe's database as they are on disk (read-only; the WAL is read too). */
export function dbRows(
  home: string,
  folder = join(home, "apps", APP),
): Array<{ version: string; seq: number; kind: string }> {
  const path = join(folder, "data", "app.db");
  if (!existsSync(path)) return [];
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT version, seq, kind FROM rows ORDER BY id").all() as Array<{
      version: string;
      seq: number;
      kind: string;
    }>;
  } finally {
    db.close();
  }
}

/** Every row a version wrote is there: seq 1..n without a gap, and its stop row (if any) names the last one. */
export function expectNoRowLost(rows: Array<{ version: string; seq: number; kind: string }>, version: string): number {
  const seqs = rows.filter((r) => r.version === version && r.kind === "row").map((r) => r.seq);
  const distinct = [...new Set(seqs)].sort((a, b) => a - b);
  expect(distinct.length).toBeGreaterThan(0);
  expect(distinct[0]).toBe(1);
  expect(distinct[distinct.length - 1]).toBe(distinct.length);
  const stops = rows.filter((r) => r.version === version && r.kind === "stopped").map((r) => r.seq);
  for (const last of stops) expect(distinct).toContain(last === 0 ? 1 : last);
  return distinct.length;
}

export async function waitHealthy(gw: RunningGateway, version?: string): Promise<Json> {
  const row = await waitForRow(gw, APP, (b) => b.running && b.healthy, 30_000);
  expect(row?.healthy, JSON.stringify(row)).toBe(true);
  if (version) expect((await appRow(gw))?.version).toBe(version);
  return row as Json;
}

export async function proxied(gw: RunningGateway): Promise<{ status: number; body: Json | null }> {
  const response = await gw.fetch(`/apps/${APP}/api/state`);
  const text = await response.text();
  let body: Json | null;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    body = null;
  }
  return { status: response.status, body };
}

export async function securityRows(gw: RunningGateway, kinds: string[]): Promise<Json[]> {
  const out: Json[] = [];
  for (const kind of kinds) {
    const response = await gw.fetch(`/api/security/events?kind=${kind}&limit=500`);
    expect(response.status).toBe(200);
    out.push(...((await response.json()) as { events: Json[] }).events.filter((e) => e.subject === APP));
  }
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the gateway log says the transition paused at `point` (test-pause.ts). */
export async function waitForPause(home: string, point: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const log = join(home, "logs", "gateway.log");
  while (Date.now() < deadline) {
    if (existsSync(log) && readFileSync(log, "utf8").includes(`paused at ${point} `)) return;
    await sleep(50);
  }
  throw new Error(`the gateway never paused at ${point}`);
}
