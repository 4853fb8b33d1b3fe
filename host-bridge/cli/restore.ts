// `personalclaw restore <archive> [--mode replace|merge]`: checks the archive whole before
// anything is written (archive-check.ts), then prints the plan, rebuilds a stopped gateway's
// home (replace, journaled: restore-journal.ts), or adds what a running one lacks (merge).
import { dirname } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { safeLine } from "../../kernel/text/text-safety";
import { homePaths } from "../home";
import { checkArchive } from "../durability/archive-check";
import { planRestore, type RestorePlan } from "../durability/restore-plan";
import { recoverRestore } from "../durability/restore-journal";
import { replaceHome, type RestoreStep } from "../durability/restore-replace";
import { pauseAtNamedStep } from "../install/test-pause";
import { printCliError, readPassphrase } from "./backup";
import { readLiveGateway } from "./gateway-file";
import { runningGateway } from "./gateway-client";
import { commandHint, homeInProse } from "./invocation";
import { mergeIntoHome } from "./restore-merge";

export const RESTORE_MODES = ["replace", "merge"] as const;
export type RestoreMode = (typeof RESTORE_MODES)[number];

function packagesLine(app: RestorePlan["apps"][number]): string {
  const from =
    app.packages_from === "archive"
      ? "from the pinned files in the archive, no network needed"
      : "fetched from its registry (the archive carries only their pins)";
  return `packages installed again at its first start, ${from}: ${app.packages.map((p) => safeLine(p)).join(", ")}`;
}

/** A granted folder this machine lacks: the grant is kept as consented, and that app's starts are refused until the owner grants one again. */
function missingFolderLines(plan: RestorePlan): string[] {
  return plan.folder_grants
    .filter((g) => !g.exists)
    .map(
      (g) =>
        `folder grant ${safeLine(g.app)}/${safeLine(g.need)}: ${safeLine(g.path)} does not exist on this machine; ${safeLine(g.app)} does not start with it (folder_grant_changed) until you grant a folder again: ${commandHint("apps", "folders", g.app, "set", g.need, "<folder>")}`,
    );
}

function planText(plan: RestorePlan): string {
  const lines = [
    `Archive of ${plan.created_at} (PersonalClaw ${safeLine(plan.gateway_version)}): it verifies.`,
    `Security log: ${plan.counts.log_rows} rows, head ${plan.log.head_seq}, checkpoint ${plan.log.checkpoint_seq}.`,
    `Sessions ${plan.counts.sessions}, approvals ${plan.counts.approvals}, grants ${plan.counts.grants}; settings ${plan.settings ? "included" : "none"}.`,
  ];
  for (const app of plan.apps)
    lines.push(
      `app ${safeLine(app.name)} ${safeLine(app.version ?? "?")}: ${app.data_files} data files${app.enabled ? "" : ", disabled"}${
        app.in_home ? "; already in this home (merge leaves it unchanged)" : ""
      }${app.packages.length ? `; ${packagesLine(app)}` : ""}`,
    );
  lines.push(...missingFolderLines(plan));
  for (const secret of plan.secrets)
    lines.push(
      `secret ${safeLine(secret.name)}${secret.in_home ? ": already in this home (merge keeps the home's)" : ""}`,
    );
  for (const skipped of plan.skipped) lines.push(`left out when backed up: ${safeLine(skipped)}`);
  lines.push("Nothing was written. Restore with --mode replace (gateway stopped) or --mode merge (gateway running).");
  return `${lines.join("\n")}\n`;
}

function refuseRunningGateway(home: string): void {
  if (readLiveGateway(homePaths(home)) !== null)
    throw new GatewayError("gateway_running", { vars: { home: homeInProse(home), stop: commandHint("stop") } });
}

export async function runRestore(
  home: string,
  archivePath: string,
  values: { mode?: RestoreMode; "passphrase-file"?: string; json?: boolean },
): Promise<number> {
  const json = Boolean(values.json);
  const say = (line: string) => {
    if (!json) process.stderr.write(`${line}\n`);
  };
  try {
    const settled = await recoverRestore(home);
    if (settled === "in_progress")
      throw new GatewayError("gateway_running", {
        vars: { home: homeInProse(home), stop: "wait for the restore under way to finish" },
      });
    if (settled !== "none") say(`restore: an interrupted restore of ${home} was ${settled.replace("_", " ")}`);
    if (values.mode === "replace") refuseRunningGateway(home);
    if (values.mode === "merge") runningGateway(home);
    const passphrase = await readPassphrase(values["passphrase-file"]);
    const checked = await checkArchive(archivePath, passphrase, say);
    try {
      const plan = planRestore(home, checked);
      if (values.mode === undefined) {
        process.stdout.write(json ? `${JSON.stringify({ verified: true, plan })}\n` : planText(plan));
        return 0;
      }
      if (values.mode === "merge") return await mergeIntoHome(home, checked, plan, json);
      // Checked again after the archive was read: a gateway started meanwhile is not replaced under it.
      refuseRunningGateway(home);
      const step = async (name: RestoreStep) => {
        say(`restore: ${name}`);
        if (TEST_BUILD) await pauseAtNamedStep(dirname(home), `restore:${name}`, say);
      };
      const result = await replaceHome(home, checked, step);
      if (json) process.stdout.write(`${JSON.stringify({ restored: "replace", ...result, plan })}\n`);
      else
        process.stdout.write(
          [
            `Restored ${home} from the archive: ${result.parts} files, apps: ${result.apps.map((a) => safeLine(a)).join(", ") || "none"}, security log to row ${result.log_head}.`,
            ...plan.apps.filter((a) => a.packages.length > 0).map((a) => `app ${safeLine(a.name)}: ${packagesLine(a)}`),
            ...missingFolderLines(plan),
            `Start it with: ${commandHint("start")}`,
          ].join("\n") + "\n",
        );
      return 0;
    } finally {
      await checked.archive.close();
    }
  } catch (error) {
    if (error instanceof GatewayError) return printCliError(error, json);
    throw error;
  }
}
