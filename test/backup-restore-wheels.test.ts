// Backup and restore of a Python app whose install fetched wheels (docs/backup-and-restore.md,
// "Packages"), end to end: `apps add pypi:` of a published MCP server from the PyPI index stand-in
// on a real gateway, backed up; then, the index gone (as PyPI would be to a machine offline), a
// replace into a fresh home on another port and a merge into a running home that lacks it each
// install its wheels again, confined, from the files the archive carried, and the server answers
// an MCP client started from mcp.json. A carried wheel altered — a byte flipped in its sealed part,
// or altered in the home before the backup so the archive carries it faithfully — is refused
// before anything is written, and nothing is installed.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import type { PypiIndexStandIn } from "./helpers/pypi-index";
import { startWordsIndex, WORDS_APP, WORDS_SPEC } from "./helpers/pypi-words-app";
import { agentFromMcpJson } from "./helpers/mcp-agent";
import { allowEveryTool } from "./helpers/mcp-tool-policy";
import { OpenedArchive } from "../host-bridge/durability/archive-reader";
import type { Json } from "./helpers/probe-app";

const PASSPHRASE = "a passphrase for the wheels suite";
const KEY = `${WORDS_APP}:${WORDS_APP}`;

/**
 * Counts words through the restored server, and answers which interpreter prefix runs it. A
 * merged app's tools are pinned and allowed by the home it joins (`allowIn`); a replaced home
 * has the archive's pins and policy.
 */
async function wordsAnswer(
  home: string,
  ownerHome: string,
  allowIn?: RunningGateway,
): Promise<{ counted: string; prefix: string }> {
  const { client, close } = await agentFromMcpJson(home, KEY, ownerHome);
  try {
    if (allowIn) await allowEveryTool(allowIn, client, WORDS_APP, WORDS_APP);
    const counted = await client.callTool({ name: "count_words", arguments: { text: "one two three four" } });
    const which = await client.callTool({ name: "interpreter", arguments: {} });
    return {
      counted: (counted.content as Array<{ text: string }>)[0]!.text,
      prefix: (JSON.parse((which.content as Array<{ text: string }>)[0]!.text) as { prefix: string }).prefix,
    };
  } finally {
    await close();
  }
}

function flipByte(path: string, at: number): void {
  const bytes = readFileSync(path);
  bytes[at] = bytes[at]! ^ 0x01;
  writeFileSync(path, bytes);
}

describe("a Python app whose install fetched wheels is restored with them, from the archive alone", () => {
  let root: string;
  let ownerHome: string;
  let gw: RunningGateway;
  let index: PypiIndexStandIn | null = null;
  let archive: string;
  let passFile: string;
  let toolsWheel: string;
  const restore = (from: string, home: string, ...mode: string[]) =>
    runCli(["restore", from, ...mode, "--passphrase-file", passFile, "--json", "--home", home], { HOME: ownerHome });

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-backup-wheels-");
    ownerHome = join(root, "owner");
    const home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    passFile = join(root, "pass");
    writeFileSync(passFile, `${PASSPHRASE}\n`);
    ({ index, toolsWheel } = await startWordsIndex(root));
    writeFileSync(join(home, "config.json"), JSON.stringify({ install: { pypi_index: index.url } }));
    gw = await startGateway({ home, env: { HOME: ownerHome } });
    const added = await runCli(["apps", "add", WORDS_SPEC, "--yes", "--home", home], { HOME: ownerHome }, 300_000);
    expect(added.code, added.stderr).toBe(0);
    const { client, close } = await agentFromMcpJson(home, KEY, ownerHome);
    try {
      await allowEveryTool(gw, client, WORDS_APP, WORDS_APP);
    } finally {
      await close();
    }
    archive = join(root, "words.pcbackup");
    const backup = await runCli(["backup", "--out", archive, "--passphrase-file", passFile, "--home", home]);
    expect(backup.code, backup.stderr).toBe(0);
    // From here on there is no index: whatever is installed comes from the archive.
    await index.close();
    index = null;
  }, 420_000);

  afterAll(async () => {
    await gw?.stop();
    await index?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("carries the pinned wheels and not the venv", async () => {
    const opened = await OpenedArchive.open(archive);
    try {
      const paths = opened.manifest.parts.map((p) => p.path).filter((p) => p.startsWith(`apps/${WORDS_APP}/`));
      expect(paths.filter((p) => p.includes("/wheels/")).sort()).toEqual([
        `apps/${WORDS_APP}/wheels/pc_mcp_words_server-1.0.0-py3-none-any.whl`,
        `apps/${WORDS_APP}/wheels/${basename(toolsWheel)}`,
      ]);
      expect(paths.filter((p) => p.includes("/venv/"))).toEqual([]);
      expect(opened.manifest.apps.find((a) => a.name === WORDS_APP)?.packages.length).toBeGreaterThan(0);
    } finally {
      await opened.close();
    }
  });

  it("a replace into a fresh home on another port installs its wheels from the archive, and it answers", async () => {
    const target = join(mkdtempSync(join(root, "replace-")), "home");
    const replaced = await restore(archive, target, "--mode", "replace");
    expect(replaced.code, replaced.stderr).toBe(0);
    const { plan } = JSON.parse(replaced.stdout) as Json;
    expect(plan.apps.find((a: Json) => a.name === WORDS_APP).packages_from).toBe("archive");
    expect(JSON.parse(readFileSync(join(target, "restore-packages.json"), "utf8")).apps).toEqual([{ name: WORDS_APP }]);
    expect(existsSync(join(target, "apps", WORDS_APP, "venv"))).toBe(false);
    const restored = await startGateway({ home: target, env: { HOME: ownerHome } });
    try {
      expect(restored.port).not.toBe(gw.port);
      await expect.poll(() => existsSync(join(target, "restore-packages.json")), { timeout: 180_000 }).toBe(false);
      const rows = (await (
        await restored.fetch("/api/security/events?kind=app_packages_restored&limit=10")
      ).json()) as {
        events: Json[];
      };
      expect(rows.events.map((e) => e.subject)).toEqual([WORDS_APP]);
      expect(await wordsAnswer(target, ownerHome)).toEqual({ counted: "4", prefix: expect.stringMatching(/\/venv$/) });
    } finally {
      await restored.stop();
    }
  }, 300_000);

  it("a merge into a running home that lacks it adds it with its wheels installed from the archive, and it answers", async () => {
    const other = await startGateway({
      home: join(mkdtempSync(join(root, "merge-")), "home"),
      env: { HOME: ownerHome },
    });
    try {
      const merged = await restore(archive, other.home, "--mode", "merge");
      expect(merged.code, merged.stderr + merged.stdout).toBe(0);
      const items = (JSON.parse(merged.stdout) as { items: Json[] }).items;
      expect(items.find((i) => i.item === `app ${WORDS_APP}`)?.outcome).toBe("merged");
      expect(items.find((i) => i.item === `packages for ${WORDS_APP}`)?.outcome).toBe("merged");
      expect(existsSync(join(other.home, "restore-packages.json"))).toBe(false);
      expect(await wordsAnswer(other.home, ownerHome, other)).toEqual({
        counted: "4",
        prefix: expect.stringMatching(/\/venv$/),
      });
    } finally {
      await other.stop();
    }
  }, 300_000);

  it("a byte flipped in a carried wheel's sealed part is refused archive_invalid before anything is written", async () => {
    const opened = await OpenedArchive.open(archive);
    const wheel = opened.manifest.parts.find((p) => p.path.endsWith(`/wheels/${basename(toolsWheel)}`))!;
    await opened.close();
    const tampered = join(root, "wheel-flipped.pcbackup");
    writeFileSync(tampered, readFileSync(archive));
    flipByte(tampered, wheel.offset + Math.floor(wheel.size / 2));
    const target = join(mkdtempSync(join(root, "flipped-")), "home");
    const refused = await restore(tampered, target, "--mode", "replace");
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe("archive_invalid");
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it("a wheel altered in the home before the backup is carried faithfully, and refused pypi_hash_mismatch before anything is written", async () => {
    const wheel = join(gw.home, "apps", WORDS_APP, "wheels", basename(toolsWheel));
    const original = readFileSync(wheel);
    flipByte(wheel, Math.floor(original.length / 2));
    const altered = join(root, "altered.pcbackup");
    try {
      const backup = await runCli(["backup", "--out", altered, "--passphrase-file", passFile, "--home", gw.home]);
      expect(backup.code, backup.stderr).toBe(0);
    } finally {
      writeFileSync(wheel, original);
    }
    // A replace into a fresh home: nothing made.
    const target = join(mkdtempSync(join(root, "altered-")), "home");
    const replaced = await restore(altered, target, "--mode", "replace");
    expect(replaced.code).toBe(1);
    const envelope = JSON.parse(replaced.stdout) as Json;
    expect(envelope.error.code).toBe("pypi_hash_mismatch");
    expect(envelope.error.message).toContain(basename(toolsWheel));
    expect(existsSync(target)).toBe(false);
    // A merge into a running home: no folder placed, nothing listed, nothing installed.
    const other = await startGateway({
      home: join(mkdtempSync(join(root, "merge-")), "home"),
      env: { HOME: ownerHome },
    });
    try {
      const before = readdirSync(other.home).sort();
      const merged = await restore(altered, other.home, "--mode", "merge");
      expect(merged.code).toBe(1);
      expect((JSON.parse(merged.stdout) as Json).error.code).toBe("pypi_hash_mismatch");
      expect(readdirSync(other.home).sort()).toEqual(before);
      expect(existsSync(join(other.home, "apps", WORDS_APP))).toBe(false);
      expect((await other.fetch(`/api/apps/${WORDS_APP}`)).status).toBe(404);
    } finally {
      await other.stop();
    }
  }, 180_000);
});
