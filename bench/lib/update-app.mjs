// Update time: node-notes with a 10 MB SQLite database in data/, updated by the product's own
// updateApp (staged and reviewed, the old backend stopped, data/ copied through SQLite's
// backup API, the old folder kept, the new backend started confined and health-gated, then
// the kept folder dropped), against a bare recursive copy of the same files.
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { importProductModules } from "./product-modules.mjs";
import Database from "better-sqlite3";
import { msSince } from "./procs.mjs";
import { repoRoot } from "./workerd.mjs";

/** Bundles updateApp, previewBundle and the supervisor (TypeScript) for this run and imports them. */
async function loadUpdate() {
  const { module } = await importProductModules("bench/update-app.mjs", [
    'export { updateApp, commitUpdate } from "./host-bridge/install/update-app.ts";',
    'export { previewBundle } from "./host-bridge/install/preview.ts";',
    'export { BackendSupervisor } from "./host-bridge/supervisor/backend-supervisor.ts";',
  ]);
  return module;
}

/** Writes about `bytes` of rows into a SQLite database at `path`. */
function fillDatabase(path, bytes) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  const insert = db.prepare("INSERT INTO notes (body) VALUES (?)");
  const body = "x".repeat(1000);
  db.transaction(() => {
    for (let i = 0; i < bytes / 1000; i += 1) insert.run(body);
  })();
  db.close();
}

/** Runs `runs` updates and bare copies; answers ms arrays. */
export async function measureUpdates(scratch, runs) {
  const { updateApp, commitUpdate, previewBundle, BackendSupervisor } = await loadUpdate();
  const home = join(scratch, "update-home");
  const appsDir = join(home, "apps");
  const appDir = join(appsDir, "node-notes");
  const source = join(repoRoot, "apps", "fixtures", "node-notes");
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const preview = {
    quarantineRoot: join(appsDir, ".quarantine"),
    reservedNames: new Set(),
    core: { version: "0.1.0", features: ["backends", "ui", "proxy-signature", "app-messaging", "security-log"] },
  };
  mkdirSync(preview.quarantineRoot, { recursive: true });
  const supervisor = new BackendSupervisor({
    home,
    sandbox: { mode: "on" },
    parentEnv: env,
    passthrough: [],
    startupPollMs: 5,
  });
  const spec = (manifest) => ({
    name: "node-notes",
    appDir,
    dataDir: join(appDir, "data"),
    hasStorage: true,
    backend: {
      command: manifest.backend.command,
      args: manifest.backend.args,
      healthCheck: manifest.backend.healthCheck,
    },
  });
  const backend = {
    stop: async (name) => {
      supervisor.hold(name);
      await supervisor.stop(name);
      supervisor.release(name);
    },
    start: async (_name, manifest) => void (await supervisor.start(spec(manifest))),
    startHealthy: async (name, manifest, timeoutMs) => {
      const started = await supervisor.start(spec(manifest));
      if (!started.ok) return { ok: false, reason: started.reason };
      return (await supervisor.waitForHealth(name, timeoutMs)) ? { ok: true } : { ok: false, reason: "not healthy" };
    },
  };
  const reviewed = await previewBundle(source, preview);
  if (!reviewed.ok) throw new Error(`node-notes preview refused: ${reviewed.message}`);
  const installed = { manifest: reviewed.manifest, review: reviewed.review, digest: reviewed.digest, enabled: true };
  const ctx = { home, appsDir, preview, parentEnv: env, passthrough: [], log: () => {} };

  // CPU of this process alone (what the bridge spends on an update; the backends it stops and
  // starts are processes of their own, measured by the backends section).
  const out = { update: [], bareCopy: [], updateCpuMs: [], bareCopyCpuMs: [], databaseBytes: 10 * 1024 * 1024 };
  const ownCpuMs = (since) => {
    const used = process.cpuUsage(since);
    return (used.user + used.system) / 1000;
  };
  for (let r = -1; r < runs; r++) {
    rmSync(appsDir, { recursive: true, force: true });
    mkdirSync(preview.quarantineRoot, { recursive: true });
    cpSync(source, appDir, { recursive: true });
    mkdirSync(join(appDir, "data"), { recursive: true });
    fillDatabase(join(appDir, "data", "notes.db"), out.databaseBytes);
    const bare = join(scratch, "bare-copy");
    rmSync(bare, { recursive: true, force: true });
    let started = process.hrtime.bigint();
    let cpu = process.cpuUsage();
    cpSync(appDir, bare, { recursive: true });
    if (r >= 0) out.bareCopy.push(msSince(started));
    if (r >= 0) out.bareCopyCpuMs.push(ownCpuMs(cpu));
    const old = await supervisor.start(spec(reviewed.manifest));
    if (!old.ok || !(await supervisor.waitForHealth("node-notes", 10_000)))
      throw new Error("the installed node-notes backend did not start");
    started = process.hrtime.bigint();
    cpu = process.cpuUsage();
    await updateApp("node-notes", source, undefined, installed, ctx, backend, () => {});
    await commitUpdate(home, appsDir, "node-notes");
    if (r >= 0) out.update.push(msSince(started));
    if (r >= 0) out.updateCpuMs.push(ownCpuMs(cpu));
    await supervisor.stop("node-notes");
  }
  await supervisor.stopAll();
  return out;
}
