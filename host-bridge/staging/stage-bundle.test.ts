import { execFileSync, spawn } from "node:child_process";
import {
  link,
  lstat,
  mkdir,
  readdir,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
  chmod,
  appendFile,
  readFile,
} from "node:fs/promises";
import {
  appendFileSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeSandbox, type Sandbox } from "../../test/fixtures/hostile/sandbox";
import { readBundle, stageBundle, type StageOptions } from "./stage-bundle";

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.cleanup();
});

async function sandbox(fixture?: string): Promise<Sandbox> {
  const sb = await makeSandbox(fixture);
  if (!fixture) await writeFile(path.join(sb.bundle, "app.json"), '{"name":"x","version":"1.0.0"}');
  sandboxes.push(sb);
  return sb;
}

/** Stages and asserts the refusal code and named path, and that nothing was left or written. */
async function expectRefused(sb: Sandbox, code: string, namedPath: string | undefined, opts?: StageOptions) {
  const before = await sb.snapshot();
  const r = await stageBundle(sb.bundle, sb.quarantine, opts);
  if (r.ok) throw new Error(`expected ${code}, the bundle was staged`);
  expect(r.code).toBe(code);
  if (namedPath !== undefined) expect(r.path).toBe(namedPath);
  expect(r.message.length).toBeGreaterThan(0);
  expect(await sb.quarantineEntries()).toEqual([]);
  if (!opts?.afterSurvey) {
    expect(await sb.snapshot()).toBe(before);
    // Reading without a copy refuses the same tree with the same code, path and message.
    expect(await readBundle(sb.bundle, opts)).toEqual(r);
  }
  expect(await readFile(sb.sentinel, "utf8")).toBe("sentinel: must never change\n");
  return r;
}

const LARGE_FILE_BYTES = 8 * 1024 * 1024;
/** What a hostile author does to a large file while it is read between chunks. */
const LARGE_FILE_CHANGES: Array<[string, (file: string) => void]> = [
  ["grown", (file) => appendFileSync(file, "x")],
  ["shrunk", (file) => truncateSync(file, LARGE_FILE_BYTES - 1)],
  // Rewritten in place at the same size, its mtime put back to the nanosecond: neither size
  // nor mtime tells; the change time, which no one can set back, does.
  [
    "rewritten",
    (file) => {
      const { mtimeNs } = statSync(file, { bigint: true });
      writeFileSync(file, Buffer.alloc(LARGE_FILE_BYTES, 9));
      const ns = (mtimeNs % 1_000_000_000n).toString().padStart(9, "0");
      execFileSync("touch", ["-m", "-d", `@${mtimeNs / 1_000_000_000n}.${ns}`, file]);
      expect(statSync(file, { bigint: true }).mtimeNs).toBe(mtimeNs);
    },
  ],
];

/** The byte offset of this process's open descriptor on `file`, or null when none is open. */
function readOffsetOf(file: string): number | null {
  for (const fd of readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed since the listing
    }
    if (target !== file) continue;
    const pos = /^pos:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"));
    if (pos) return Number(pos[1]);
  }
  return null;
}

function canMknod(): boolean {
  try {
    const probe = path.join(process.env.TMPDIR ?? "/tmp", `pc-mknod-probe-${process.pid}`);
    execFileSync("mknod", [probe, "c", "1", "3"], { stdio: "ignore" });
    execFileSync("rm", ["-f", probe]);
    return true;
  } catch {
    return false;
  }
}
const MKNOD_WORKS = canMknod();

/** Swaps two names atomically (renameat2 RENAME_EXCHANGE), forever. */
const EXCHANGE_LOOP = [
  "import ctypes, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "a, b = sys.argv[1].encode(), sys.argv[2].encode()",
  "while True: libc.renameat2(-100, a, -100, b, 2)",
].join("\n");

describe("a bundle changing under the copy", () => {
  it("never stages or shows a file a link leads to, while a folder of the bundle flips to a link and back", async () => {
    const sb = await sandbox();
    const outside = path.join(path.dirname(sb.bundle), "owner-files");
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, "note.txt"), "OWNER-PRIVATE");
    await mkdir(path.join(sb.bundle, "sub"));
    await writeFile(path.join(sb.bundle, "sub", "note.txt"), "the bundle's own");
    // The bundle's writer swaps `sub` and a link to the owner's folder in one step, over and over.
    await symlink(outside, path.join(sb.bundle, "sub.link"));
    const flipper = spawn(
      "python3",
      ["-c", EXCHANGE_LOOP, path.join(sb.bundle, "sub"), path.join(sb.bundle, "sub.link")],
      {
        stdio: "ignore",
      },
    );
    try {
      for (let i = 0; i < 400; i++) {
        const shown: string[] = [];
        const onFileStaged = (_entry: unknown, bytes: Buffer) => shown.push(bytes.toString("utf8"));
        await readBundle(sb.bundle, { onFileStaged });
        expect(shown, `read ${i}`).not.toContain("OWNER-PRIVATE");
        const r = await stageBundle(sb.bundle, sb.quarantine, { onFileStaged });
        expect(shown, `stage ${i}`).not.toContain("OWNER-PRIVATE");
        if (r.ok) {
          for (const entry of r.entries)
            if (entry.type === "file")
              expect(await readFile(path.join(r.dir, ...entry.path.split("/")), "utf8")).not.toBe("OWNER-PRIVATE");
          await rm(r.dir, { recursive: true, force: true });
        }
      }
    } finally {
      flipper.kill("SIGKILL");
    }
  });
});

describe("stageBundle refuses links that could bring in outside bytes", () => {
  it.each([
    ["link-absolute", "bundle_link_absolute", "passwd"],
    ["link-escapes", "bundle_link_escapes", "stolen"],
    ["link-escapes-and-returns", "bundle_link_escapes", "sub/manifest-again"],
    ["link-to-folder", "bundle_link_to_folder", "lib-alias"],
    ["link-dangling", "bundle_link_dangling", "main.js"],
    ["link-loop", "bundle_link_loop", "a"],
    ["link-into-data", "bundle_link_crosses_data", "state-peek.json"],
    ["link-out-of-data", "bundle_link_crosses_data", "data/code.py"],
    ["data-is-link", "bundle_reserved_name_is_link", "data"],
    ["installed-json-is-link", "bundle_reserved_name_is_link", "installed.json"],
    ["link-into-omitted", "bundle_link_into_omitted", "settings.ini"],
  ])("fixture %s is refused with %s naming %s", async (fixture, code, namedPath) => {
    await expectRefused(await sandbox(fixture), code, namedPath);
  });

  it("a link into a .git folder (made at run time) is refused as pointing into an omitted folder", async () => {
    const sb = await sandbox();
    await mkdir(path.join(sb.bundle, ".git"));
    await writeFile(path.join(sb.bundle, ".git", "config"), "[core]\n");
    await symlink(".git/config", path.join(sb.bundle, "cfg"));
    await expectRefused(sb, "bundle_link_into_omitted", "cfg");
  });

  it("a link to a file inside the bundle is recreated as the same relative link", async () => {
    const sb = await sandbox("link-inside-ok");
    const r = await stageBundle(sb.bundle, sb.quarantine);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(path.dirname(r.dir)).toBe(sb.quarantine);
    expect(await readlink(path.join(r.dir, "alias.js"))).toBe("lib/real.js");
    expect(await readlink(path.join(r.dir, "lib/chain.js"))).toBe("../alias.js");
    expect(r.entries.find((e) => e.path === "alias.js")).toMatchObject({ type: "link", linkTarget: "lib/real.js" });
  });
});

describe("stageBundle refuses special files and outside hard links without opening them", () => {
  it("a FIFO is refused (made with mkfifo)", async () => {
    const sb = await sandbox();
    execFileSync("mkfifo", [path.join(sb.bundle, "pipe")]);
    const r = await expectRefused(sb, "bundle_special_file", "pipe");
    expect(r.message).toContain("pipe");
  });

  it("a socket is refused (made by a listening net.Server)", async () => {
    const sb = await sandbox();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(sb.bundle, "sock"), resolve));
    try {
      await expectRefused(sb, "bundle_special_file", "sock");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.runIf(MKNOD_WORKS)("a character device is refused (skipped only where mknod is impossible)", async () => {
    const sb = await sandbox();
    execFileSync("mknod", [path.join(sb.bundle, "null-dev"), "c", "1", "3"]);
    await expectRefused(sb, "bundle_special_file", "null-dev");
  });

  it.runIf(MKNOD_WORKS)("a block device is refused (skipped only where mknod is impossible)", async () => {
    const sb = await sandbox();
    execFileSync("mknod", [path.join(sb.bundle, "loop-dev"), "b", "7", "0"]);
    await expectRefused(sb, "bundle_special_file", "loop-dev");
  });

  it("a hard link to a file outside the bundle is refused", async () => {
    const sb = await sandbox();
    await link(sb.sentinel, path.join(sb.bundle, "innocent.txt"));
    await expectRefused(sb, "bundle_hardlink_outside", "innocent.txt");
  });

  it("hard links whose every name is inside the bundle are staged as separate copies", async () => {
    const sb = await sandbox();
    await writeFile(path.join(sb.bundle, "a.txt"), "same bytes");
    await link(path.join(sb.bundle, "a.txt"), path.join(sb.bundle, "b.txt"));
    const r = await stageBundle(sb.bundle, sb.quarantine);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(await readFile(path.join(r.dir, "b.txt"), "utf8")).toBe("same bytes");
    expect((await stat(path.join(r.dir, "b.txt"))).nlink).toBe(1);
  });
});

describe("stageBundle refuses names that read differently elsewhere", () => {
  it.each([
    ["a backslash", "evil\\name.js"],
    ["a control character", "bell\u0007.js"],
    ["a newline", "line\nbreak.js"],
    ["a C1 control character", "c1\u009b.js"],
  ])("a name with %s is refused", async (_label, name) => {
    const sb = await sandbox();
    await writeFile(path.join(sb.bundle, name), "x");
    const r = await expectRefused(sb, "bundle_name_invalid", undefined);
    expect(r.path).toBeDefined();
  });

  it("a name that is not UTF-8 is refused", async () => {
    const sb = await sandbox();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(Buffer.concat([Buffer.from(path.join(sb.bundle, "bad")), Buffer.from([0xff, 0xfe])]), "x");
    await expectRefused(sb, "bundle_name_invalid", undefined);
  });

  it("two names that differ only by letter case are refused as a collision", async () => {
    const sb = await sandbox();
    await mkdir(path.join(sb.bundle, "src"));
    await writeFile(path.join(sb.bundle, "src", "README.md"), "a");
    await writeFile(path.join(sb.bundle, "src", "readme.md"), "b");
    const r = await expectRefused(sb, "bundle_name_collision", "src/readme.md");
    expect(r.message).toContain("src/README.md");
  });

  it("two names that differ only by Unicode normalisation (NFC vs NFD) are refused as a collision", async () => {
    const sb = await sandbox();
    const nfc = "caf\u00e9.py";
    const nfd = "cafe\u0301.py";
    await writeFile(path.join(sb.bundle, nfc), "a");
    await writeFile(path.join(sb.bundle, nfd), "b");
    const r = await expectRefused(sb, "bundle_name_collision", undefined);
    expect([nfc, nfd]).toContain(r.path);
  });
});

describe("stageBundle leaves tooling out", () => {
  it("omits .git, .hg, .svn, __pycache__, .venv, venv and .tox at any depth and case, and keeps node_modules", async () => {
    const sb = await sandbox();
    for (const dir of [".git", "sub/.HG", "sub/deep/.Svn", "pkg/__pycache__", ".venv", "Venv", "x/.TOX"]) {
      await mkdir(path.join(sb.bundle, dir), { recursive: true });
      await writeFile(path.join(sb.bundle, dir, "payload"), "tooling");
    }
    await mkdir(path.join(sb.bundle, "node_modules", "dep"), { recursive: true });
    await writeFile(path.join(sb.bundle, "node_modules", "dep", "index.js"), "module.exports = 1;");
    const r = await stageBundle(sb.bundle, sb.quarantine);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const paths = r.entries.map((e) => e.path);
    expect(paths.some((p) => /(^|\/)(\.git|\.hg|\.svn|__pycache__|\.venv|venv|\.tox)(\/|$)/i.test(p))).toBe(false);
    expect(paths).toContain("node_modules/dep/index.js");
    expect(r.omitted.sort()).toEqual(
      [".git", ".venv", "Venv", "pkg/__pycache__", "sub/.HG", "sub/deep/.Svn", "x/.TOX"].sort(),
    );
    await expect(lstat(path.join(r.dir, ".git"))).rejects.toThrow();
    await expect(lstat(path.join(r.dir, "Venv"))).rejects.toThrow();
  });
});

describe("stageBundle caps", () => {
  it("refuses more entries than the cap", async () => {
    const sb = await sandbox();
    for (let i = 0; i < 5; i++) await writeFile(path.join(sb.bundle, `f${i}`), "x");
    await expectRefused(sb, "bundle_too_many_files", undefined, { caps: { maxEntries: 4 } });
  });

  it("refuses a tree deeper than the cap, naming the path", async () => {
    const sb = await sandbox();
    await mkdir(path.join(sb.bundle, "a/b/c"), { recursive: true });
    await expectRefused(sb, "bundle_too_deep", "a/b/c", { caps: { maxDepth: 2 } });
  });

  it("refuses a file larger than the per-file cap, naming it", async () => {
    const sb = await sandbox();
    await writeFile(path.join(sb.bundle, "big.bin"), Buffer.alloc(2048));
    await expectRefused(sb, "bundle_file_too_large", "big.bin", { caps: { maxFileBytes: 1024 } });
  });

  it("refuses a bundle larger than the total cap", async () => {
    const sb = await sandbox();
    for (let i = 0; i < 4; i++) await writeFile(path.join(sb.bundle, `part${i}`), Buffer.alloc(400));
    await expectRefused(sb, "bundle_too_large", undefined, { caps: { maxTotalBytes: 1000 } });
  });
});

describe("stageBundle copies only what the survey saw", () => {
  it("a file swapped for a symlink after the survey fails the copy and leaves quarantine empty", async () => {
    const sb = await sandbox();
    await writeFile(path.join(sb.bundle, "main.py"), "print('hello')\n");
    const r = await expectRefused(sb, "bundle_changed_during_copy", "main.py", {
      afterSurvey: async () => {
        await rm(path.join(sb.bundle, "main.py"));
        await symlink(sb.sentinel, path.join(sb.bundle, "main.py"));
      },
    });
    expect(r.ok).toBe(false);
  });

  it("a file rewritten after the survey fails the copy", async () => {
    const sb = await sandbox();
    await writeFile(path.join(sb.bundle, "main.py"), "print('hello')\n");
    await expectRefused(sb, "bundle_changed_during_copy", "main.py", {
      afterSurvey: () => appendFile(path.join(sb.bundle, "main.py"), "import os; os.system('rm -rf /')\n"),
    });
  });

  it("a file swapped for a FIFO after the survey fails the copy without hanging", async () => {
    const sb = await sandbox();
    await writeFile(path.join(sb.bundle, "main.py"), "print('hello')\n");
    await expectRefused(sb, "bundle_changed_during_copy", "main.py", {
      afterSurvey: async () => {
        await rm(path.join(sb.bundle, "main.py"));
        execFileSync("mkfifo", [path.join(sb.bundle, "main.py")]);
      },
    });
  });

  it("when several files change after the survey, the refusal always names the first in survey order", async () => {
    const sb = await sandbox();
    await mkdir(path.join(sb.bundle, "lib"));
    const names = Array.from({ length: 60 }, (_, i) => `lib/m${String(i).padStart(2, "0")}.py`);
    for (const name of names) await writeFile(path.join(sb.bundle, name), `# ${name}\n`);
    for (let attempt = 0; attempt < 3; attempt++) {
      const rewrite = [names[53]!, names[17]!, names[41]!];
      await expectRefused(sb, "bundle_changed_during_copy", names[17], {
        afterSurvey: async () => {
          for (const name of rewrite) await appendFile(path.join(sb.bundle, name), "import os\n");
        },
      });
    }
  });

  it("normalises installed modes: no setuid, setgid, sticky or group/world write; executable class kept", async () => {
    const sb = await sandbox();
    await writeFile(path.join(sb.bundle, "run.sh"), "#!/bin/sh\n");
    await chmod(path.join(sb.bundle, "run.sh"), 0o6777);
    await writeFile(path.join(sb.bundle, "notes.txt"), "x");
    await chmod(path.join(sb.bundle, "notes.txt"), 0o666);
    await mkdir(path.join(sb.bundle, "shared"));
    await chmod(path.join(sb.bundle, "shared"), 0o1777);
    const r = await stageBundle(sb.bundle, sb.quarantine);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect((await stat(path.join(r.dir, "run.sh"))).mode & 0o7777).toBe(0o755);
    expect((await stat(path.join(r.dir, "notes.txt"))).mode & 0o7777).toBe(0o644);
    expect((await stat(path.join(r.dir, "shared"))).mode & 0o7777).toBe(0o755);
    expect(await readdir(sb.quarantine)).toEqual([r.id]);
  });

  it("lets the event loop run while it copies many files", async () => {
    const sb = await sandbox();
    for (let i = 0; i < 200; i++) await writeFile(path.join(sb.bundle, `f${String(i).padStart(3, "0")}.txt`), `${i}`);
    let turned = false;
    const shownAfterTurn: string[] = [];
    const r = await stageBundle(sb.bundle, sb.quarantine, {
      onFileStaged: (entry) => {
        if (entry.path === "app.json") setImmediate(() => (turned = true));
        if (turned) shownAfterTurn.push(entry.path);
      },
    });
    expect(r.ok).toBe(true);
    // The callback queued while the first file was shown ran before the copy finished.
    expect(shownAfterTurn.length).toBeGreaterThan(0);
    expect(shownAfterTurn).not.toContain("app.json");
  });
  it("yields within a large file and after a few megabytes of small ones, not only every 32 files", async () => {
    /** What the staged copy looked like at each turn of the event loop while `work` ran. */
    const seenDuring = async (quarantine: string, look: (staged: string) => number, work: () => Promise<unknown>) => {
      const seen = new Set<number>();
      let running = true;
      const beat = () => {
        if (!running) return;
        for (const id of readdirSync(quarantine)) seen.add(look(path.join(quarantine, id)));
        setImmediate(beat);
      };
      setImmediate(beat);
      const result = (await work()) as { ok: boolean };
      running = false;
      return { seen, ok: result.ok };
    };
    const large = await sandbox();
    const size = 8 * 1024 * 1024;
    await writeFile(path.join(large.bundle, "big.bin"), Buffer.alloc(size, 7));
    const big = await seenDuring(
      large.quarantine,
      (staged) => {
        try {
          return statSync(path.join(staged, "big.bin")).size;
        } catch {
          return 0;
        }
      },
      () => stageBundle(large.bundle, large.quarantine),
    );
    expect(big.ok).toBe(true);
    // Some turn ran while the large file was part copied.
    expect([...big.seen].some((n) => n > 0 && n < size)).toBe(true);

    const many = await sandbox();
    for (let i = 0; i < 12; i++) await writeFile(path.join(many.bundle, `m${i}.bin`), Buffer.alloc(1024 * 1024, i));
    const small = await seenDuring(
      many.quarantine,
      (staged) => readdirSync(staged).length,
      () => stageBundle(many.bundle, many.quarantine),
    );
    expect(small.ok).toBe(true);
    // 13 files, fewer than 32: only the 4 MiB budget lets a turn see some of them copied.
    expect([...small.seen].some((n) => n > 1 && n < 13)).toBe(true);
  });
  it("refuses a large file grown, shrunk or rewritten in place while the copy yields between its chunks", async () => {
    const size = LARGE_FILE_BYTES;
    for (const [what, change] of LARGE_FILE_CHANGES) {
      const sb = await sandbox();
      const file = path.join(sb.bundle, "big.bin");
      await writeFile(file, Buffer.alloc(size, 7));
      let changed = false;
      const watch = () => {
        // Once the staged copy holds part of the file, the source changes under it.
        for (const id of readdirSync(sb.quarantine)) {
          const staged = path.join(sb.quarantine, id, "big.bin");
          let done = 0;
          try {
            done = statSync(staged).size;
          } catch {
            // not created yet
          }
          if (!changed && done > 0 && done < size) {
            change(file);
            changed = true;
          }
        }
        if (!changed) setImmediate(watch);
      };
      setImmediate(watch);
      const r = await stageBundle(sb.bundle, sb.quarantine);
      expect(changed, what).toBe(true);
      expect(r.ok, what).toBe(false);
      if (!r.ok) expect(r.code, what).toBe("bundle_changed_during_copy");
      expect(await sb.quarantineEntries(), what).toEqual([]);
    }
  });
});

describe("readBundle reads what stageBundle stages and writes nothing", () => {
  it("answers the staged entries (types, modes, sizes, hashes, links) and shows the same bytes", async () => {
    const sb = await sandbox("link-inside-ok");
    await mkdir(path.join(sb.bundle, "deep", "er"), { recursive: true });
    await writeFile(path.join(sb.bundle, "deep", "er", "run.sh"), "#!/bin/sh\necho hi\n");
    await chmod(path.join(sb.bundle, "deep", "er", "run.sh"), 0o6775);
    await writeFile(path.join(sb.bundle, "big.bin"), Buffer.alloc(3 * 1024 * 1024 + 17, 5));
    await writeFile(path.join(sb.bundle, "empty.txt"), "");
    const shownBy = () => {
      const shown = new Map<string, string>();
      return { shown, onFileStaged: (e: { path: string }, bytes: Buffer) => shown.set(e.path, bytes.toString("hex")) };
    };
    const before = await sb.snapshot();
    const staging = shownBy();
    const staged = await stageBundle(sb.bundle, sb.quarantine, { onFileStaged: staging.onFileStaged });
    const reading = shownBy();
    const read = await readBundle(sb.bundle, { onFileStaged: reading.onFileStaged });
    if (!staged.ok || !read.ok) throw new Error("expected both to succeed");
    expect(read.entries).toEqual(staged.entries);
    expect(read.omitted).toEqual(staged.omitted);
    expect([...reading.shown]).toEqual([...staging.shown]);
    expect(read.entries.find((e) => e.path === "big.bin")?.sha256).toMatch(/^[0-9a-f]{64}$/);
    // The one staged copy is stageBundle's; reading added nothing anywhere.
    expect(await readdir(sb.quarantine)).toEqual([staged.id]);
    expect(await sb.snapshot()).toBe(before);
  });

  it("shows every file up to showUpToBytes whole, read a chunk at a time, and larger ones not at all", async () => {
    const sb = await sandbox();
    const sizes = { "one.bin": 1024 * 1024, "three.bin": 3 * 1024 * 1024 + 1, "nine.bin": 9 * 1024 * 1024 };
    for (const [name, size] of Object.entries(sizes))
      await writeFile(path.join(sb.bundle, name), Buffer.alloc(size, 1));
    const shown = new Map<string, number>();
    const read = await readBundle(sb.bundle, {
      showUpToBytes: 4 * 1024 * 1024,
      onFileStaged: (entry, bytes) => shown.set(entry.path, bytes.length),
    });
    expect(read.ok).toBe(true);
    expect(Object.fromEntries(shown)).toEqual({
      "app.json": 30,
      "one.bin": sizes["one.bin"],
      "three.bin": sizes["three.bin"],
    });
  });

  it.each([
    [
      "swapped for a link",
      async (file: string, sb: Sandbox) => {
        await rm(file);
        await symlink(sb.sentinel, file);
      },
    ],
    ["rewritten", (file: string) => appendFile(file, "import os; os.system('rm -rf /')\n")],
    [
      "swapped for a FIFO",
      async (file: string) => {
        await rm(file);
        execFileSync("mkfifo", [file]);
      },
    ],
  ])("refuses a file %s after the survey, writing nothing", async (_what, change) => {
    const sb = await sandbox();
    const file = path.join(sb.bundle, "main.py");
    await writeFile(file, "print('hello')\n");
    const r = await readBundle(sb.bundle, { afterSurvey: () => change(file, sb) });
    expect(r).toMatchObject({ ok: false, code: "bundle_changed_during_copy", path: "main.py" });
    expect(await sb.quarantineEntries()).toEqual([]);
    expect(await readFile(sb.sentinel, "utf8")).toBe("sentinel: must never change\n");
  });

  it("refuses a large file grown, shrunk or rewritten in place while the read yields between its chunks", async () => {
    const size = LARGE_FILE_BYTES;
    for (const [what, change] of LARGE_FILE_CHANGES) {
      for (const showUpToBytes of [undefined, 16 * 1024 * 1024]) {
        const sb = await sandbox();
        const file = path.join(sb.bundle, "big.bin");
        await writeFile(file, Buffer.alloc(size, 7));
        let changed = false;
        const watch = () => {
          // Once part of the file has been read, the source changes under the reader.
          const offset = readOffsetOf(file);
          if (!changed && offset !== null && offset > 0 && offset < size) {
            change(file);
            changed = true;
          }
          if (!changed) setImmediate(watch);
        };
        setImmediate(watch);
        const r = await readBundle(sb.bundle, { showUpToBytes });
        expect(changed, what).toBe(true);
        expect(r, what).toMatchObject({ ok: false, code: "bundle_changed_during_copy", path: "big.bin" });
      }
    }
  });
});
