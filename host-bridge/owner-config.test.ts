import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readOwnerConfig, sessionTtlInForce, settingsDocument, writeOwnerSetting } from "./owner-config";
import { revisionOf } from "../kernel/contracts/revision";

describe("config.json writes", () => {
  let home: string;
  beforeEach(() => (home = mkdtempSync(join(tmpdir(), "pc-config-"))));
  afterEach(() => rmSync(home, { recursive: true, force: true }));
  const file = () => join(home, "config.json");

  it("keeps every key the owner wrote and writes the file 0600", async () => {
    writeFileSync(file(), JSON.stringify({ note: "mine", sandbox: { bounds: "rlimit" } }));
    await writeOwnerSetting(home, { op: "set", path: "sandbox.mode", value: "off", expect: await revisionOf("on") });
    expect(JSON.parse(readFileSync(file(), "utf8"))).toEqual({
      note: "mine",
      sandbox: { bounds: "rlimit", mode: "off" },
    });
    expect(statSync(file()).mode & 0o777).toBe(0o600);
  });

  it("a set over a stale revision writes nothing", async () => {
    writeFileSync(file(), JSON.stringify({ sandbox: { env_passthrough: ["A"] } }));
    const before = readFileSync(file(), "utf8");
    await expect(
      writeOwnerSetting(home, {
        op: "set",
        path: "sandbox.env_passthrough",
        value: ["B"],
        expect: await revisionOf([]),
      }),
    ).rejects.toMatchObject({ code: "stale_write" });
    expect(readFileSync(file(), "utf8")).toBe(before);
  });

  it("add and remove edit one name of what is stored", async () => {
    expect(await writeOwnerSetting(home, { op: "add", path: "sandbox.network_all", name: "a" })).toEqual({
      from: [],
      to: ["a"],
    });
    expect(await writeOwnerSetting(home, { op: "add", path: "sandbox.network_all", name: "b" })).toEqual({
      from: ["a"],
      to: ["a", "b"],
    });
    expect(await writeOwnerSetting(home, { op: "remove", path: "sandbox.network_all", name: "a" })).toEqual({
      from: ["a", "b"],
      to: ["b"],
    });
    await expect(
      writeOwnerSetting(home, { op: "add", path: "sandbox.network_all", name: "Not An App" }),
    ).rejects.toMatchObject({ code: "setting_value_invalid" });
  });

  it("a hand edit that does not validate is refused by name, and a write over it changes nothing", async () => {
    writeFileSync(file(), JSON.stringify({ sandbox: { limits: { processes: 3 } } }));
    expect(readOwnerConfig(home)).toEqual({ ok: false, reason: expect.stringContaining("sandbox.limits.processes") });
    await expect(
      writeOwnerSetting(home, { op: "set", path: "sandbox.mode", value: "on", expect: await revisionOf("on") }),
    ).rejects.toMatchObject({ code: "config_file_invalid" });
  });

  it("a session lifetime above 90 days in the file is applied as 90 days", () => {
    writeFileSync(file(), JSON.stringify({ auth: { session_ttl: 200 * 86_400 } }));
    const read = readOwnerConfig(home);
    expect(read.ok && sessionTtlInForce(read.config)).toEqual({ seconds: 90 * 86_400, capped: true });
    expect(read.ok && settingsDocument(read.config).values["auth.session_ttl"]).toBe(200 * 86_400);
  });
});
