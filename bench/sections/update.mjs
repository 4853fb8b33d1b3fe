// Update: node-notes with a 10 MB SQLite database in data/ updated to a new backend, healthy,
// its rollback copy dropped, against a bare copy of the same files.
import { measureUpdates } from "../lib/update-app.mjs";

/** Times one update and one bare copy per run (bench/lib/update-app.mjs). */
export async function updateSection(bench) {
  const { RUNS, scratch, log, figure } = bench;
  log("update: node-notes with a 10 MB SQLite database in data/, against a bare copy of the same files");
  const updates = await measureUpdates(scratch, RUNS);
  bench.raw.updates = updates;
  figure(
    "update",
    "update node-notes (10 MB SQLite in data/) -> new backend healthy, rollback dropped",
    "ms",
    updates.update,
    updates.bareCopy,
    "cp -r of the same files",
  );
  figure(
    "update",
    "update node-notes, the updating process's own CPU",
    "ms CPU",
    updates.updateCpuMs,
    updates.bareCopyCpuMs,
    "cp -r of the same files, in-process",
  );
}
