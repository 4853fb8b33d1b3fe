// A confined run's egress broker ends with the run whichever step ends it: here the run's
// limits cannot be set up (its cgroup folder cannot be made), so it fails before any child
// starts, and the broker it opened for the run is stopped, not left listening.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runConfined } from "./run-confined";
import { DEFAULT_LIMITS } from "./bounds";
import { parseHostPattern, type HostPattern } from "../../kernel/rules/network-grant";
import type { EgressBrokers } from "../egress/brokers";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pc-run-confined-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("a confined run that fails before its child starts", () => {
  it("stops the egress broker it opened for the run", async () => {
    const appDir = join(root, "home", "apps", "notes");
    mkdirSync(join(appDir, "data"), { recursive: true });
    const opened: string[] = [];
    const stopped: string[] = [];
    const egress = {
      async start(key: string) {
        opened.push(key);
        return join(root, "broker.sock");
      },
      async stop(key: string) {
        stopped.push(key);
      },
    } as unknown as EgressBrokers;
    const result = await runConfined(
      {
        kind: "hook",
        app: { name: "notes", appDir, dataDir: join(appDir, "data"), hasStorage: false },
        command: { file: "/bin/true", args: [] },
        cwd: appDir,
        writable: [],
        egress: [parseHostPattern("api.example.com") as HostPattern],
        timeoutMs: 5_000,
        tag: "app notes hook",
      },
      {
        home: join(root, "home"),
        ownerHome: root,
        sandboxMode: "on",
        sandbox: { ok: true, path: "/usr/bin/bwrap", userNamespace: true, childIdentity: null },
        bounds: {
          mechanism: "cgroup",
          processLimitBinds: true,
          description: "cgroup folders that cannot be made",
          cgroupRoots: { pids: join(root, "no", "pids"), memory: join(root, "no", "memory") },
        },
        limits: DEFAULT_LIMITS,
        egress,
        parentEnv: { PATH: "/usr/bin:/bin" },
        passthrough: [],
        log: () => {},
      },
    );
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).toContain("could not be set up");
    expect(opened).toHaveLength(1);
    expect(stopped).toEqual(opened);
  });
});
