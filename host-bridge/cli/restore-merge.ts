// `restore --mode merge`: adds to a running gateway what it lacks from a checked archive, and
// reports each item — merged, copied, or left unchanged and why. An app the home does not have
// (no record, no folder) has its archived bytes and data/ written in the quarantine, moved into
// apps/<name> with one rename, then its archived record added by the gateway (POST
// /api/durability/merge), which starts it; a record refused takes the folder away again. An app
// the home has keeps its own bytes and data. The secrets a merged app was given come along:
// opened with the archive's own key (in a private folder removed at once), a secret the home
// lacks is stored again — sealed to this home's key by the gateway — and given to the app. An app
// whose install fetched packages is listed in restore-packages.json before its folder moves in (so
// nothing starts it without them), and once its record is in the gateway installs them, confined,
// from the pinned files the archive carried: it starts only when they are in.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { PackagesOutcomeSchema } from "../../kernel/contracts/durability";
import { GatewayError } from "../../kernel/contracts/errors";
import { safeLine } from "../../kernel/text/text-safety";
import { homePaths } from "../home";
import { SecretStore } from "../secrets/secret-store";
import type { CheckedArchive } from "../durability/archive-check";
import { writeArchiveFiles } from "../durability/archive-files";
import { archivedRecords, type RestorePlan } from "../durability/restore-plan";
import { clearMergeJournal, settleMerge, writeMergeJournal } from "../durability/merge-journal";
import { addPendingPackages, dropPendingPackages, readPendingPackages } from "../durability/restore-packages";
import { pauseAtNamedStep } from "../install/test-pause";
import { callGateway, parseAnswer } from "./gateway-client";

export interface MergeItem {
  item: string;
  outcome: "merged" | "copied" | "unchanged";
  why: string;
}

const AppsAnswer = z.object({ apps: z.array(z.object({ name: z.string() })) });
const PackagesAnswer = z.object({ apps: z.array(PackagesOutcomeSchema) });
const MergeAnswer = z.object({
  apps: z.array(z.object({ name: z.string(), outcome: z.enum(["merged", "unchanged"]), why: z.string() })),
});

function refused(answer: { status: number; body: unknown }): GatewayError {
  const error = (answer.body as { error?: { code?: string; message?: string } } | null)?.error;
  return GatewayError.fromEnvelope(error?.code ?? "bridge_unavailable", error?.message ?? "", undefined, answer.status);
}

/** The archived config document of each app. */
function archivedConfigs(checked: CheckedArchive): Map<string, Record<string, unknown>> {
  const table = checked.state.stores.AppRegistry.tables.find((t) => t.name === "app_config");
  const out = new Map<string, Record<string, unknown>>();
  for (const row of table?.rows ?? [])
    out.set(String(row[table!.columns.indexOf("name")]), JSON.parse(String(row[table!.columns.indexOf("config")])));
  return out;
}

/** Places each app's archived bytes and data/ under apps/, one rename per app. */
async function placeApps(home: string, checked: CheckedArchive, names: readonly string[]): Promise<void> {
  const staging = join(homePaths(home).quarantine, `merge-${randomBytes(6).toString("hex")}`);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    const chosen = new Set(names);
    await writeArchiveFiles(checked, (path) => {
      const [top, app] = path.split("/");
      return top === "apps" && app !== undefined && chosen.has(app) ? join(staging, path.slice("apps/".length)) : null;
    });
    for (const name of names) await rename(join(staging, name), join(homePaths(home).apps, name));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The values the archive's own store holds for `app`, by the variable it gets: secret name and value. */
async function archivedSecretsOf(
  home: string,
  checked: CheckedArchive,
  app: string,
  digest: string,
): Promise<Array<{ secret: string; as: string; value: string }>> {
  const folder = join(homePaths(home).run, `merge-secrets-${randomBytes(6).toString("hex")}`);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  try {
    await writeArchiveFiles(checked, (path) =>
      path === "secrets.key" || path.startsWith("secrets/") ? join(folder, path) : null,
    );
    const store = new SecretStore({
      key: join(folder, "secrets.key"),
      store: join(folder, "secrets", "store"),
      apps: join(folder, "secrets", "apps"),
    });
    const uses = store
      .list()
      .secrets.flatMap((s) => s.used_by.filter((u) => u.app === app).map((u) => ({ secret: s.name, as: u.as })));
    const opened = store.openAppSecrets(
      { app, digest },
      uses.map((u) => u.as),
    ).env;
    return uses.filter((u) => opened[u.as] !== undefined).map((u) => ({ ...u, value: opened[u.as]! }));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function mergeSecrets(home: string, checked: CheckedArchive, app: string, digest: string, report: MergeItem[]) {
  const storeDir = join(home, "secrets", "store");
  const held = new Set(existsSync(storeDir) ? readdirSync(storeDir).map((f) => f.replace(/\.json$/, "")) : []);
  let given = 0;
  for (const { secret, as, value } of await archivedSecretsOf(home, checked, app, digest)) {
    if (held.has(secret)) {
      report.push({
        item: `secret ${secret}`,
        outcome: "unchanged",
        why: "this home has its own value; that one is kept",
      });
    } else {
      const put = await callGateway(home, "restore", "PUT", `/api/secrets/${encodeURIComponent(secret)}`, { value });
      if (put.status !== 200) throw refused(put);
      held.add(secret);
      report.push({
        item: `secret ${secret}`,
        outcome: "copied",
        why: "absent from this home: sealed again to this home's key",
      });
    }
    if (TEST_BUILD) await pauseAtNamedStep(home, "merge:secrets", (line) => process.stderr.write(`${line}\n`));
    const assign = await callGateway(
      home,
      "restore",
      "POST",
      `/api/secrets/${encodeURIComponent(secret)}/assign`,
      { app, as },
      { provePresence: true },
    );
    if (assign.status !== 200) throw refused(assign);
    report.push({
      item: `secret ${secret} for ${app}`,
      outcome: "merged",
      why: `given to ${app} as ${as}, as in the archive`,
    });
    given++;
  }
  // A backend gets its secrets at its start: the merged app starts again with them.
  if (given > 0) {
    const restart = await callGateway(home, "restore", "POST", `/api/apps/${encodeURIComponent(app)}/restart`, {});
    if (restart.status !== 200) throw refused(restart);
  }
}

/** Takes away a folder this merge placed whose record did not come, and its entry on the packages list. */
async function removePlaced(home: string, name: string): Promise<void> {
  await rm(join(homePaths(home).apps, name), { recursive: true, force: true });
  dropPendingPackages(home, name);
}

/**
 * Has the gateway install the packages of every app the list names (POST /api/durability/packages:
 * confined, from the files the archive carried, hashes checked) and reports each; false when one
 * is held back.
 */
async function mergePackages(home: string, plan: RestorePlan, report: MergeItem[]): Promise<boolean> {
  const pending = readPendingPackages(home);
  if (pending !== "unreadable" && pending.length === 0) return true;
  const answer = parseAnswer(
    await callGateway(home, "restore", "POST", "/api/durability/packages", {}, { provePresence: true }),
    PackagesAnswer,
  );
  if (!answer.ok) throw refused(answer.answer);
  for (const app of answer.body.apps) {
    const from = plan.apps.find((a) => a.name === app.name)?.packages_from;
    report.push(
      app.ok
        ? {
            item: `packages for ${app.name}`,
            outcome: "merged",
            why:
              from === "registry"
                ? "installed confined, fetched from the registry they were pinned from"
                : "installed confined from the pinned files the archive carried, their hashes checked",
          }
        : {
            item: `packages for ${app.name}`,
            outcome: "unchanged",
            why: `not installed (${app.code}: ${app.reason}); nothing half installed, and ${app.name} is not started (packages_not_restored) until a merge or a start installs them`,
          },
    );
  }
  return answer.body.apps.every((a) => a.ok);
}

export async function mergeIntoHome(
  home: string,
  checked: CheckedArchive,
  plan: RestorePlan,
  json: boolean,
): Promise<number> {
  const report: MergeItem[] = [];
  let failed = false;
  const listed = parseAnswer(await callGateway(home, "restore", "GET", "/api/apps"), AppsAnswer);
  if (!listed.ok) throw refused(listed.answer);
  const installed = new Set(listed.body.apps.map((a) => a.name));
  const settled = await settleMerge(home, (name) => installed.has(name));
  if (settled === "in_progress")
    throw new GatewayError("bad_request", { vars: { reason: "another merge into this home is under way" } });
  for (const name of settled.removed)
    report.push({
      item: `app ${name}`,
      outcome: "unchanged",
      why: "a merge killed before its record left this folder; it was removed and is merged again below",
    });
  const records = archivedRecords(checked.state);
  const configs = archivedConfigs(checked);
  const absent: string[] = [];
  for (const app of plan.apps) {
    const record = records.get(app.name);
    if (installed.has(app.name))
      report.push({
        item: `app ${app.name}`,
        outcome: "unchanged",
        why: "this home has it: its own bytes and data are kept",
      });
    else if (existsSync(join(homePaths(home).apps, app.name)))
      report.push({
        item: `app ${app.name}`,
        outcome: "unchanged",
        why: `a folder apps/${app.name} without a record is in the way; nothing was written over it`,
      });
    else if (record?.origin !== "local")
      report.push({ item: `app ${app.name}`, outcome: "unchanged", why: "a native app comes with the package" });
    else absent.push(app.name);
  }
  // Owed by a merge killed while handing them out: handed out below, with this merge's own.
  const owed = settled.secretsOwed.filter((name) => records.has(name));
  writeMergeJournal(home, absent, owed);
  // Listed before their folders move in: no start runs an app whose packages are not in yet.
  addPendingPackages(
    home,
    plan.apps.filter((a) => absent.includes(a.name) && a.packages.length > 0).map((a) => a.name),
  );
  await placeApps(home, checked, absent);
  if (TEST_BUILD) await pauseAtNamedStep(home, "merge:placed", (line) => process.stderr.write(`${line}\n`));
  const merged = parseAnswer(
    await callGateway(
      home,
      "restore",
      "POST",
      "/api/durability/merge",
      {
        apps: absent.map((name) => ({ record: records.get(name)!, config: configs.get(name) ?? null })),
      },
      { provePresence: true },
    ),
    MergeAnswer,
  );
  if (!merged.ok) {
    for (const name of absent) await removePlaced(home, name);
    writeMergeJournal(home, [], owed);
    throw refused(merged.answer);
  }
  for (const app of merged.body.apps) {
    report.push({ item: `app ${app.name}`, outcome: app.outcome, why: app.why });
    if (app.outcome !== "merged") await removePlaced(home, app.name);
  }
  // Every placed folder now has its record or is gone; the merged apps are owed their secrets.
  const owing = [...owed, ...merged.body.apps.filter((a) => a.outcome === "merged").map((a) => a.name)];
  writeMergeJournal(home, [], owing);
  if (TEST_BUILD) await pauseAtNamedStep(home, "merge:packages", (line) => process.stderr.write(`${line}\n`));
  // Every app still listed — this merge's, and any a killed merge or a start left — installed now.
  if (!(await mergePackages(home, plan, report))) failed = true;
  for (const name of owed)
    report.push({
      item: `secrets for ${name}`,
      outcome: "merged",
      why: "a merge killed while handing them out left them owed: handed out now",
    });
  for (const [index, name] of owing.entries()) {
    await mergeSecrets(home, checked, name, String(records.get(name)!.consentDigest), report);
    writeMergeJournal(home, [], owing.slice(index + 1));
  }
  clearMergeJournal(home);
  report.push({
    item: "security log",
    outcome: "unchanged",
    why: "this home's log goes on; the archive's is not merged into it",
  });
  if (json) process.stdout.write(`${JSON.stringify({ restored: "merge", items: report })}\n`);
  else
    for (const line of report) process.stdout.write(`${line.outcome}\t${safeLine(line.item)}\t${safeLine(line.why)}\n`);
  // An app held back for its packages is a merge not finished: said above, and by the exit status.
  return failed ? 1 : 0;
}
