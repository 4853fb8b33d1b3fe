// Backup and restore: a gateway home with node-notes and a 50 MB SQLite database in its data/,
// backed up by `personalclaw backup` while the gateway runs and restored by `personalclaw
// restore --mode replace` into a fresh home, against `tar` of the same home (create, then
// extract) in the same run; and the archive's size against the home's. The floor is measured in
// the same run too: the CLI's own start (`--version`) against a bare Node process's.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, lstatSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { installApp, runCli, startPersonalclaw, waitHealthy } from "../lib/gateway.mjs";
import { cpuMeter, msSince } from "../lib/procs.mjs";
import { repoRoot } from "../lib/workerd.mjs";

const DATABASE_BYTES = 50 * 1024 * 1024;

function fillDatabase(path, bytes) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB)");
  const insert = db.prepare("INSERT INTO rows (body) VALUES (randomblob(?))");
  db.transaction(() => {
    for (let i = 0; i < bytes / 4000; i += 1) insert.run(4000);
  })();
  db.close();
}

/** Bytes of the regular files under `dir` (not following links). */
function treeBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isDirectory()) total += treeBytes(path);
    else if (st.isFile()) total += st.size;
  }
  return total;
}

function timed(fn) {
  const started = process.hrtime.bigint();
  fn();
  return msSince(started);
}

/** The CPU a backup and a restore took, against tar's for the same bytes. */
function cpuFigures(figure, out) {
  figure(
    "backup",
    "personalclaw backup, CPU (the CLI, the bridge, workerd)",
    "ms CPU",
    out.backupCpu,
    out.tarCreateCpu,
    "tar -cf of the same home, its CPU",
  );
  figure(
    "backup",
    "personalclaw restore --mode replace, CPU (the CLI)",
    "ms CPU",
    out.restoreCpu,
    out.tarExtractCpu,
    "tar -xf of that tar, its CPU",
  );
}

/** Each run: `restore --mode replace` of the archive into a fresh home against `tar -xf` of the tarball, wall time and CPU. */
async function measureRestores(RUNS, scratch, { archive, tarball, pass }, out) {
  for (let r = -1; r < RUNS; r++) {
    const target = join(scratch, `restored-${r + 1}`);
    let cpu = cpuMeter([process.pid]);
    const restore = await runCli(
      ["restore", archive, "--mode", "replace", "--passphrase-file", pass, "--home", join(target, "home")],
      600_000,
    );
    if (restore.code !== 0) throw new Error(`restore failed: ${restore.stderr}`);
    const restoreCpu = cpu.ns() / 1e6;
    const extracted = join(scratch, `extracted-${r + 1}`);
    mkdirSync(extracted);
    cpu = cpuMeter([process.pid]);
    const tarMs = timed(() => execFileSync("tar", ["-xf", tarball, "-C", extracted], { stdio: "ignore" }));
    const tarCpu = cpu.ns() / 1e6;
    rmSync(target, { recursive: true, force: true });
    rmSync(extracted, { recursive: true, force: true });
    if (r < 0) continue;
    out.restore.push(restore.ms);
    out.tarExtract.push(tarMs);
    out.restoreCpu.push(restoreCpu);
    out.tarExtractCpu.push(tarCpu);
  }
}

export async function backupSection(bench) {
  const { RUNS, scratch, log, figure, cleanups } = bench;
  log(
    "backup: node-notes with a 50 MB SQLite database in data/, backup and replace restore against tar of the same home",
  );
  const home = join(scratch, "backup-home");
  const gateway = await startPersonalclaw(home);
  cleanups.push(() => gateway.stop());
  await installApp(gateway, join(repoRoot, "apps", "fixtures", "node-notes"));
  await waitHealthy(gateway, ["node-notes"]);
  fillDatabase(join(home, "apps", "node-notes", "data", "big.db"), DATABASE_BYTES);
  const pass = join(scratch, "backup-pass");
  writeFileSync(pass, "a passphrase for the bench\n");
  const out = {
    backup: [],
    tarCreate: [],
    restore: [],
    tarExtract: [],
    cliStart: [],
    nodeStart: [],
    backupCpu: [],
    tarCreateCpu: [],
    restoreCpu: [],
    tarExtractCpu: [],
    archiveBytes: 0,
    homeBytes: 0,
    tarBytes: 0,
  };
  const archive = join(scratch, "home.pcbackup");
  const tarball = join(scratch, "home.tar");
  for (let r = -1; r < RUNS; r++) {
    rmSync(archive, { force: true });
    // CPU of the CLI (reaped by this process), the bridge and workerd; tar's, reaped by this process.
    let cpu = cpuMeter([process.pid, gateway.bridgePid, gateway.workerdPid]);
    const backup = await runCli(["backup", "--out", archive, "--passphrase-file", pass, "--home", home], 600_000);
    if (backup.code !== 0) throw new Error(`backup failed: ${backup.stderr}`);
    const backupCpu = cpu.ns() / 1e6;
    rmSync(tarball, { force: true });
    cpu = cpuMeter([process.pid]);
    // The same home, read as it is: tar copies the live files (a -wal beside its database too).
    const tarMs = timed(() =>
      execFileSync("tar", ["-cf", tarball, "--warning=no-file-changed", "-C", home, "."], { stdio: "ignore" }),
    );
    const tarCpu = cpu.ns() / 1e6;
    // The floor every command pays, in the same run: the CLI's own start, and a bare Node process's.
    const version = await runCli(["--version"]);
    if (version.code !== 0) throw new Error(`--version failed: ${version.stderr}`);
    const nodeMs = timed(() => execFileSync(process.execPath, ["-e", "0"], { stdio: "ignore" }));
    if (r < 0) continue; // a warm-up run
    out.backup.push(backup.ms);
    out.tarCreate.push(tarMs);
    out.backupCpu.push(backupCpu);
    out.tarCreateCpu.push(tarCpu);
    out.cliStart.push(version.ms);
    out.nodeStart.push(nodeMs);
  }
  out.archiveBytes = statSync(archive).size;
  out.tarBytes = statSync(tarball).size;
  out.homeBytes = treeBytes(home);
  await gateway.stop();
  await measureRestores(RUNS, scratch, { archive, tarball, pass }, out);
  bench.raw.backup = out;
  figure(
    "backup",
    "personalclaw backup of a running home (50 MB SQLite in data/), CLI wall time",
    "ms",
    out.backup,
    out.tarCreate,
    "tar -cf of the same home",
  );
  figure(
    "backup",
    "personalclaw --version, CLI wall time (the start every command pays)",
    "ms",
    out.cliStart,
    out.nodeStart,
    "node -e 0",
  );
  // What the backup costs beyond the CLI's start, run by run: the archive's own work.
  figure(
    "backup",
    "personalclaw backup less that run's --version",
    "ms",
    out.backup.map((ms, i) => ms - out.cliStart[i]),
    out.tarCreate,
    "tar -cf of the same home",
  );
  figure(
    "backup",
    "personalclaw restore --mode replace into a fresh home, CLI wall time",
    "ms",
    out.restore,
    out.tarExtract,
    "tar -xf of that tar",
  );
  cpuFigures(figure, out);
  const mb = (bytes) => [bytes / (1024 * 1024)];
  figure("backup", "archive size", "MiB", mb(out.archiveBytes), mb(out.homeBytes), "the home's files");
  figure(
    "backup",
    "archive size against tar's",
    "MiB",
    mb(out.archiveBytes),
    mb(out.tarBytes),
    "the tar of the same home",
  );
}
