import { describe, expect, it } from "vitest";
import { serverEnvironment } from "./server-env";

const allowlisted = { PATH: "/usr/bin", HOME: "/tmp", XDG_CONFIG_HOME: "/tmp/.config" };
const app = { dataDir: "/h/apps/a/data", hasStorage: true };

describe("an MCP server's environment", () => {
  it("${DATA} in a declared value is the app's data folder as the server sees it", () => {
    const env = serverEnvironment({ MEMORY_FILE_PATH: "${DATA}/memory.jsonl" }, allowlisted, app);
    expect(env.MEMORY_FILE_PATH).toBe("/h/apps/a/data/memory.jsonl");
  });

  it("HOME and XDG folders declared inside ${DATA} replace the private /tmp ones", () => {
    const env = serverEnvironment({ HOME: "${DATA}", XDG_CONFIG_HOME: "${DATA}/.config" }, allowlisted, app);
    expect(env.HOME).toBe("/h/apps/a/data");
    expect(env.XDG_CONFIG_HOME).toBe("/h/apps/a/data/.config");
  });

  it("the allowlist still wins everywhere else: PATH, and a HOME outside ${DATA}, or without a data/", () => {
    expect(serverEnvironment({ PATH: "/evil", HOME: "/etc" }, allowlisted, app)).toMatchObject({
      PATH: "/usr/bin",
      HOME: "/tmp",
    });
    expect(serverEnvironment({ HOME: "${DATA}" }, allowlisted, { ...app, hasStorage: false }).HOME).toBe("/tmp");
  });
});
