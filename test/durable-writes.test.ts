// The bridge's own files survive a power cut once it has answered (issue 34.3): the real bridge
// is traced by strace while it stores a home's first secret and writes a setting, and each
// write is a flushed staging file renamed over its target, then a flushed folder, all before
// the answer leaves; the key is on disk before any sealed value needs it. Staging files a
// killed write left behind are swept at the next start.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeHome, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

const json = { "content-type": "application/json" };

interface Call {
  name: string;
  line: string;
  /** The paths strace printed: the quoted arguments and each descriptor's `<path>`. */
  paths: string[];
}

function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  for (const line of text.split("\n")) {
    const match = /^(?:\[pid\s+)?\d+\]?\s+([a-z0-9_]+)\((.*)$/.exec(line);
    if (!match) continue;
    const paths = [...match[2]!.matchAll(/"([^"]*)"|<([^<>]*)>/g)].map((m) => m[1] ?? m[2]!);
    calls.push({ name: match[1]!, line, paths });
  }
  return calls;
}

/** strace attached to every thread of `pid`; resolves once it is tracing. */
async function traceProcess(pid: number, out: string): Promise<ChildProcess> {
  const strace = spawn(
    "strace",
    ["-f", "-y", "-s", "4096", "-e", "trace=openat,fsync,fdatasync,rename,renameat,renameat2,write,writev"].concat([
      "-o",
      out,
      "-p",
      String(pid),
    ]),
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let said = "";
  await new Promise<void>((resolve, reject) => {
    strace.stderr!.on("data", (chunk) => {
      said += chunk;
      if (said.includes("attached")) resolve();
    });
    strace.once("exit", (code) => reject(new Error(`strace exited ${code}: ${said}`)));
    strace.stderr!.once("error", reject);
  });
  // Attaching announces each thread; the last one is traced a moment later.
  await new Promise((r) => setTimeout(r, 500));
  return strace;
}

async function stopTrace(strace: ChildProcess): Promise<void> {
  const ended = new Promise((r) => strace.once("exit", r));
  strace.kill("SIGINT");
  await ended;
}

/**
 * The steps of one durable write of `target`, as indexes into `calls`: the staging file
 * flushed, renamed over the target, and the target's folder flushed after the rename.
 */
function durableWriteOf(
  calls: Call[],
  target: string,
): { created: number; flushed: number; renamed: number; folderFlushed: number } {
  const staging = new RegExp(`^${target.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.[0-9a-f]{12}\\.tmp$`);
  const created = calls.findIndex(
    (c) => c.name === "openat" && c.paths.some((p) => staging.test(p)) && /O_CREAT/.test(c.line),
  );
  const renamed = calls.findIndex(
    (c) => c.name.startsWith("rename") && c.paths.some((p) => staging.test(p)) && c.paths.includes(target),
  );
  const flushed = calls.findIndex((c, i) => i > created && c.name === "fsync" && c.paths.some((p) => staging.test(p)));
  const folderFlushed = calls.findIndex(
    (c, i) => i > renamed && c.name === "fsync" && c.paths.includes(dirname(target)),
  );
  return { created, flushed, renamed, folderFlushed };
}

/** The index of the first answer the bridge wrote to a socket that holds `text` (as strace quotes it). */
function answerHolding(calls: Call[], text: string): number {
  return calls.findIndex(
    (c) => (c.name === "write" || c.name === "writev") && /<(TCP|socket|UNIX)/.test(c.line) && c.line.includes(text),
  );
}

describe("the bridge's own writes are durable before they are answered", () => {
  let gw: RunningGateway;
  afterAll(async () => {
    await gw?.stop();
    if (gw) {
      removeHome(gw.home);
      rmSync(`${gw.home}.strace`, { force: true });
    }
  });

  it("a home's first secret: the key is flushed with its folder before the sealed value is staged, and both before the answer", async () => {
    gw = await startGateway();
    const out = `${gw.home}.strace`;
    const strace = await traceProcess(gw.pid, out);
    try {
      const put = await gw.fetch("/api/secrets/FIRST_KEY", {
        method: "PUT",
        headers: json,
        body: JSON.stringify({ value: "first-secret-value-1234" }),
      });
      expect(put.status).toBe(200);
      const set = await runCli(["config", "set", "sandbox.limits.memory_mb", "512", "--home", gw.home]);
      expect(set.code, set.stderr).toBe(0);
    } finally {
      await stopTrace(strace);
    }
    const calls = parseTrace(await readFile(out, "utf8"));

    const key = durableWriteOf(calls, join(gw.home, "secrets.key"));
    const sealed = durableWriteOf(calls, join(gw.home, "secrets", "store", "FIRST_KEY.json"));
    for (const write of [key, sealed]) {
      expect(write.created).toBeGreaterThanOrEqual(0);
      expect(write.flushed).toBeGreaterThan(write.created);
      expect(write.renamed).toBeGreaterThan(write.flushed);
      expect(write.folderFlushed).toBeGreaterThan(write.renamed);
    }
    // The key and the home's entry for it are on disk before a sealed value exists even as staging.
    expect(key.folderFlushed).toBeLessThan(sealed.created);
    // The store's folders were made durably too: the home holds `secrets`, `secrets` holds `store`.
    const madeSecrets = calls.findIndex(
      (c, i) => i > key.folderFlushed && c.name === "fsync" && c.paths.includes(gw.home),
    );
    expect(madeSecrets).toBeGreaterThan(key.folderFlushed);
    expect(madeSecrets).toBeLessThan(sealed.created);
    const answered = answerHolding(calls, '{\\"replaced\\":false,\\"resealed\\":0}');
    expect(answered).toBeGreaterThan(sealed.folderFlushed);

    const config = durableWriteOf(calls, join(gw.home, "config.json"));
    expect(config.flushed).toBeGreaterThan(config.created);
    expect(config.renamed).toBeGreaterThan(config.flushed);
    expect(config.folderFlushed).toBeGreaterThan(config.renamed);
    expect(answerHolding(calls.slice(config.folderFlushed), '{\\"from\\":1024,\\"to\\":512}')).toBeGreaterThanOrEqual(
      0,
    );
    expect(answerHolding(calls.slice(config.created, config.folderFlushed), '{\\"from\\":1024,\\"to\\":512}')).toBe(-1);
  });
});

describe("staging files a killed write left behind", () => {
  const home = makeHome();
  let gw: RunningGateway | undefined;
  afterAll(async () => {
    await gw?.stop();
    removeHome(home);
  });

  it("are swept at start; a young one (a write in flight) and an app's own files are kept", async () => {
    const old = new Date(Date.now() - 10 * 60_000);
    const plant = (path: string, age: Date | null) => {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, "half", { mode: 0o600 });
      if (age) utimesSync(path, age, age);
      return path;
    };
    const swept = [
      plant(join(home, "config.json.0123456789ab.tmp"), old),
      plant(join(home, "secrets.key.0123456789ab.tmp"), old),
      plant(join(home, "secrets", "store", "API_KEY.json.0123456789ab.tmp"), old),
      plant(join(home, "secrets", "apps", "some-app", "API_KEY.json.0123456789ab.tmp"), old),
      plant(join(home, "apps", "some-app", ".app_secret.0123456789ab.tmp"), old),
    ];
    const kept = [
      plant(join(home, "state_manifest.json.fedcba987654.tmp"), null),
      plant(join(home, "apps", "some-app", "cache.0123456789ab.tmp"), old),
    ];
    gw = await startGateway({ home });
    for (const path of swept) expect(existsSync(path), path).toBe(false);
    for (const path of kept) expect(existsSync(path), path).toBe(true);
    expect(await readFile(join(home, "logs", "gateway.log"), "utf8")).toContain(
      "removed 5 staging files a killed write left behind",
    );
  });
});
