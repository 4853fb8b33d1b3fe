// Starts the real stack the way an owner does — `personalclaw start` with a temporary home
// and a free port — and gives tests a client for it. Gateways start from the test build
// (test/build/personalclaw.mjs: the injectable clock and /api/test/* compiled in); one-shot
// commands run the shipped CLI unless a test asks for the test build's.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll } from "vitest";
import { readProcStat } from "../../host-bridge/supervisor/process-identity";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
export const cliPath = join(repoRoot, "bin", "personalclaw.mjs");
export const testBuildCliPath = join(repoRoot, "test", "build", "personalclaw.mjs");

export interface RunningGateway {
  home: string;
  port: number;
  url: string;
  /** The startup link's token: an owner token usable as Bearer. */
  token: string;
  pid: number;
  /** The whole --json-ready line (a first start adds sel_verification_code). */
  ready: Record<string, unknown>;
  process: ChildProcess;
  base: string;
  stderr: () => string;
  /** fetch against the gateway with the owner's Bearer unless headers say otherwise. */
  fetch: (path: string, init?: RequestInit & { owner?: boolean }) => Promise<Response>;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export function makeHome(prefix = "pc-home-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeHome(home: string): void {
  rmSync(home, { recursive: true, force: true });
}

/** Runs a CLI command to completion. */
/**
 * A home whose gateway.json names this test process as the live gateway on `port`, where
 * nothing answers (its workerd gone), with a local secret: what the CLI meets when a gateway
 * stopped answering.
 */
export function writeUnansweringGateway(home: string, port: number): void {
  writeFileSync(
    join(home, "gateway.json"),
    JSON.stringify({
      pid: process.pid,
      pidStartTime: readProcStat(process.pid)!.startTime,
      pidExe: null,
      port,
      url: "",
      bridgePort: 1,
      startedAt: "",
      workerdPid: null,
    }),
  );
  writeFileSync(join(home, ".local_secret"), "0".repeat(64));
}

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 60_000,
  cli = cliPath,
  user?: TestUser,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      ...(user ?? {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Runs a CLI command to completion with `input` as its stdin (a secret's value, as `secrets set` reads it). */
export function runCliWithInput(
  args: string[],
  input: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** Another host user a root test runs the gateway or the CLI as (an owner who is not root). */
export interface TestUser {
  uid: number;
  gid: number;
}

/** Starts a gateway on a free port; resolves once its --json-ready line arrives. */
export async function startGateway(
  opts: { home?: string; env?: NodeJS.ProcessEnv; args?: string[]; detached?: boolean; user?: TestUser } = {},
): Promise<RunningGateway> {
  const home = opts.home ?? makeHome();
  const child = spawn(
    process.execPath,
    [testBuildCliPath, "start", "--port", "0", "--home", home, "--json-ready", ...(opts.args ?? [])],
    {
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so a test can kill the whole gateway at once (kill -9 -pgid).
      detached: opts.detached === true,
      ...(opts.user ?? {}),
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const line = await new Promise<string>((resolvePromise, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`gateway did not start in 30 s: ${stderr}`)), 30_000);
    rl.once("line", (text) => {
      clearTimeout(timer);
      resolvePromise(text);
    });
    child.once("exit", (code) => reject(new Error(`gateway exited ${code} before ready: ${stderr}`)));
  });
  const ready = JSON.parse(line) as { url: string; port: number; home: string; pid: number } & Record<string, unknown>;
  const token = new URL(ready.url).searchParams.get("token")!;
  const base = `http://127.0.0.1:${ready.port}`;
  const exited = new Promise<number | null>((resolvePromise) => child.once("exit", (code) => resolvePromise(code)));
  return {
    home,
    port: ready.port,
    url: ready.url,
    token,
    pid: ready.pid,
    ready,
    process: child,
    base,
    stderr: () => stderr,
    fetch: (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (init.owner !== false && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      return fetch(`${base}${path}`, { ...init, headers, redirect: "manual" });
    },
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * One gateway for the tests of the describe() block that calls this: started in its beforeAll,
 * stopped and its home removed in its afterAll. The object answered is filled in by that
 * beforeAll, so read it inside tests and hooks only, never while the block is being defined.
 */
export function gatewayPerSuite(opts: Parameters<typeof startGateway>[0] = {}): RunningGateway {
  const gateway = {} as RunningGateway;
  beforeAll(async () => {
    Object.assign(gateway, await startGateway(opts));
  });
  afterAll(async () => {
    await gateway.stop();
    removeHome(gateway.home);
  });
  return gateway;
}

/** The error code of a JSON error envelope. */
export async function errorCode(response: Response): Promise<string | undefined> {
  const body = (await response.json()) as { error?: { code?: string } };
  return body.error?.code;
}

/** A request through node:http, for headers fetch will not send as given (Host, duplicates). */
export function rawRequest(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string | string[]>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method: opts.method ?? "GET", path: opts.path, headers: opts.headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** The pid of the workerd the gateway runs now, from its gateway.json (the bridge restarts it). */
export function workerdPidOf(home: string): number {
  return (JSON.parse(readFileSync(join(home, "gateway.json"), "utf8")) as { workerdPid: number }).workerdPid;
}

/** Reads until `done` holds or the time is up (a read that throws counts as not yet); answers the last value read. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read().catch(() => undefined as T);
  while (!(value !== undefined && done(value)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await read().catch(() => undefined as T);
  }
  return value;
}
