import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { defaultHome } from "../settings";
import { commandHint, describeInvocation, recordInvocation, shellWord } from "./invocation";

const dir = mkdtempSync(join(tmpdir(), "pc-invocation-"));
const script = join(dir, "personalclaw.mjs");
writeFileSync(script, "");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => recordInvocation({ launcher: ["personalclaw"], startLauncher: null, home: null }));

const facts = { script, home: defaultHome(), npmCommand: "", npmLifecycleEvent: "", path: "/usr/bin" };

describe("describeInvocation", () => {
  it("names node and the script when personalclaw is not on PATH", () => {
    expect(describeInvocation(facts)).toEqual({ launcher: ["node", script], startLauncher: null, home: null });
  });

  it("names personalclaw when PATH's personalclaw is this very script", () => {
    expect(describeInvocation({ ...facts, path: `/nowhere:${dir}` }).launcher).toEqual(["node", script]);
    symlinkSync(script, join(dir, "personalclaw"));
    expect(describeInvocation({ ...facts, path: `/nowhere:${dir}` }).launcher).toEqual(["personalclaw"]);
  });

  it("never names npx, which outside the clone would fetch an unrelated package: node and the script's own path under npm exec and npm start, npm start -- for start", () => {
    expect(describeInvocation({ ...facts, npmCommand: "exec" }).launcher).toEqual(["node", script]);
    recordInvocation(describeInvocation({ ...facts, npmLifecycleEvent: "start", home: "/tmp/my home" }));
    expect(commandHint("start")).toBe("npm start -- --home '/tmp/my home'");
    expect(commandHint("token")).toBe(`node ${script} token --home '/tmp/my home'`);
  });

  it("leaves the default home out and placeholders unquoted", () => {
    recordInvocation(describeInvocation(facts));
    expect(commandHint("apps", "install", "<folder>")).toBe(`node ${script} apps install <folder>`);
  });
});

describe("shellWord", () => {
  it("quotes what a shell would split or expand", () => {
    expect(shellWord("/plain/path-1.2")).toBe("/plain/path-1.2");
    expect(shellWord("it's $HOME")).toBe(`'it'\\''s $HOME'`);
  });
});
