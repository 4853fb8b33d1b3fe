// The bridge's backup operation (docs/backup-and-restore.md): it asks the gateway for every
// Durable Object's consistent export, writes the sealed archive under the runtime part of the
// home, answers its bytes, and removes it once they are sent (or the caller left). And a merge
// restore's packages step: the apps it placed that need packages installed now, not at a start.
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { HandlersUnder } from "../bridge-contract";
import { callGatewayRoute } from "../bridge-contract";
import type { BridgeRuntime } from "../bridge-runtime";
import { StreamedFile } from "../server";
import { writeArchive, type BackupStep } from "../durability/archive-writer";
import { pauseAtNamedStep } from "../install/test-pause";
import { installPendingPackages } from "../durability/restore-packages";
import type { AppManifest } from "../../kernel/contracts/manifest";

export function durabilityOperations(rt: BridgeRuntime): HandlersUnder<"/durability/"> {
  const { paths, log, version } = rt.opts;
  const step = async (name: BackupStep, detail?: string) => {
    log(`bridge: backup ${name}${detail ? ` (${detail})` : ""}`);
    if (TEST_BUILD) await pauseAtNamedStep(paths.home, `backup:${name}`, log);
  };
  return {
    "POST /durability/backup": async ({ body: { passphrase } }) => {
      await step("export");
      const state = await callGatewayRoute(rt.opts.callGateway, "exportGatewayState", {});
      const target = join(paths.run, "backups", `${randomUUID()}.pcbackup`);
      const written = await writeArchive(target, { home: paths.home, state, passphrase, version, step });
      log(`bridge: backup written (${written.parts} parts, ${written.bytes} bytes, log head ${written.log_head.seq})`);
      return new StreamedFile(target, "application/octet-stream", () => rm(target, { force: true }));
    },
    // A merge restore's apps that need packages: installed now, confined, from the files the archive carried.
    "POST /durability/packages": async () => {
      const startable = async () => (await callGatewayRoute(rt.opts.callGateway, "startableApps", undefined)).apps;
      const start = (app: { name: string; manifest: unknown; digest?: string }) =>
        rt.startBackend(app.name, app.manifest as AppManifest, app.digest);
      return { apps: await installPendingPackages(paths, rt.hookContext(), rt.reporting, startable, start) };
    },
  };
}
