// Reading app backends' rows and installing bundles through the real CLI, for suites that
// start a real gateway.
import { expect } from "vitest";
import type { BackendStatus } from "../../kernel/contracts/app-record";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { runCli, type RunningGateway } from "./gateway";
import { runtimeDir } from "../../host-bridge/home";
import { slotSocketName } from "../../kernel/contracts/backend-slots";

/** The backend part of an app's row as the owner reads it. */
export async function backendOf(gw: RunningGateway, name: string): Promise<BackendStatus | null> {
  const response = await gw.fetch(`/api/apps/${name}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { backend: BackendStatus | null }).backend;
}

/** Polls the app's row until `done` holds; answers the last row seen (the caller asserts on it). */
export async function waitForRow(
  gw: RunningGateway,
  name: string,
  done: (row: BackendStatus) => boolean,
  timeoutMs = 20_000,
): Promise<BackendStatus | null> {
  const deadline = Date.now() + timeoutMs;
  let row = await backendOf(gw, name);
  while (!(row && done(row)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    row = await backendOf(gw, name);
  }
  return row;
}

/** Installs `folder` with --yes through the CLI; the test fails unless it exits 0. */
export async function install(home: string, folder: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const result = await runCli(["apps", "install", folder, "--yes", "--json", "--home", home], env);
  expect(result.code, `${folder}: ${result.stdout} ${result.stderr}`).toBe(0);
}

/** The socket a confined backend's slot listens on (the gateway's only way to it; no host port exists). */
export function backendSocket(home: string, row: BackendStatus): string {
  if (row.slot === null || row.slot === undefined)
    throw new Error("the backend has no slot (is it confined and running?)");
  return join(runtimeDir(home, process.env.XDG_RUNTIME_DIR), slotSocketName(row.slot));
}

/** GET on a backend straight through its slot's socket, bypassing the gateway (the way a local process on the host could). */
export function getFromBackend(
  home: string,
  row: BackendStatus,
  path: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { socketPath: backendSocket(home, row), path, method: "GET", agent: false, timeout: 5_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.end();
  });
}

/** The app token the proxy hands app `name`'s backend: an echoing backend (node-notes' /api/echo) answers what it received. */
export async function appTokenOf(gw: RunningGateway, name: string): Promise<string> {
  const echo = (await (await gw.fetch(`/apps/${name}/api/echo`)).json()) as { headers: { authorization: string } };
  return echo.headers.authorization.replace(/^Bearer /, "");
}
