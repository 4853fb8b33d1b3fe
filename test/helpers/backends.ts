// Reading app backends' rows and installing bundles through the real CLI, for suites that
// start a real gateway.
import { expect } from "vitest";
import type { BackendStatus } from "../../workers/contracts/app-record";
import { runCli, type RunningGateway } from "./gateway";

/** The backend part of an app's row as the owner reads it. */
export async function backendOf(gw: RunningGateway, name: string): Promise<BackendStatus | null> {
  const response = await gw.fetch(`/api/apps/${name}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { backend: BackendStatus | null }).backend;
}

/** Polls the app's row until `done` holds; answers the last row seen (the caller asserts on it). */
export async function waitForRow(gw: RunningGateway, name: string, done: (row: BackendStatus) => boolean, timeoutMs = 20_000): Promise<BackendStatus | null> {
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
