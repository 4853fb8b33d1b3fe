// `personalclaw apps preview|install|update|list|enable|disable|restart|uninstall`. Exit status: 0 done or
// installable, 3 refused, 1 any other failure; --json prints the answer or the error envelope.
import { resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { CORE_FEATURES } from "../../kernel/contracts/core";
import { reservedAppNames } from "../reserved-app-names";
import { readSettings } from "../settings";
import { homePaths } from "../home";
import { previewBundle } from "../install/preview";
import { callGateway, GatewayNotRunning, type GatewayAnswer } from "./gateway-client";
import { safeLine } from "../../kernel/text/text-safety";
import { printError, safeRow } from "./print";
import { fileChangesLine, registryEntryChangeLine, reviewText } from "./review-text";
import { closureDiffText } from "./closure-diff-text";
import { packageRoot, packageVersion } from "./package-facts";
import { commandHint } from "./invocation";

/** A refusal as the apps commands print it: the file or package it names beside the sentence. */
function answerError(answer: GatewayAnswer, json: boolean): number {
  const error = answer.body?.error ?? { code: "unexpected_answer", message: `The gateway answered ${answer.status}.` };
  const path = error.detail?.path ?? undefined;
  return printError({ code: error.code, message: error.message, ...(path ? { path } : {}) }, json);
}

// Without a gateway, a bundle is still checked: read under staging's checks, scanned and
// reported, with nothing written (the install that follows stages its own copy).
async function offlinePreview(home: string, source: string): Promise<GatewayAnswer> {
  const result = await previewBundle(source, {
    quarantineRoot: homePaths(home).quarantine,
    reservedNames: reservedAppNames(packageRoot),
    core: { version: packageVersion(), features: CORE_FEATURES },
    hookTimeoutSeconds: readSettings().hookTimeoutSeconds,
  });
  if (result.ok) return { status: 200, body: { review: result.review, digest: result.digest } };
  return {
    status: 422,
    body: { error: { code: result.code, message: result.message, detail: { path: result.path } } },
  };
}

/** The review of a folder: by the running gateway, or offline when none runs. */
export async function preview(home: string, source: string): Promise<GatewayAnswer> {
  try {
    return await callGateway(home, "apps-preview", "POST", "/api/apps/preview", { source });
  } catch (error) {
    if (error instanceof GatewayNotRunning) return offlinePreview(home, source);
    throw error;
  }
}

export async function runAppsPreview(home: string, folder: string, options: { json?: boolean }): Promise<number> {
  const answer = await preview(home, resolve(folder));
  if (answer.status !== 200) return answerError(answer, Boolean(options.json));
  if (options.json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else process.stdout.write(reviewText(answer.body.review, answer.body.digest));
  return 0;
}

export interface ConsentOptions {
  json?: boolean;
  yes?: boolean;
  consent?: string;
}

export async function runAppsInstall(
  home: string,
  folder: string,
  values: ConsentOptions & { "adopt-data"?: boolean },
  /** The words that install these bytes again with --consent (default `apps install <folder>`). */
  retryWords?: string[],
): Promise<number> {
  const json = Boolean(values.json);
  const source = resolve(folder);
  let consent = values.consent;
  if (consent === undefined) {
    const reviewed = await callGateway(home, "apps-install", "POST", "/api/apps/preview", { source });
    if (reviewed.status !== 200) return answerError(reviewed, json);
    if (!json) process.stderr.write(reviewText(reviewed.body.review, reviewed.body.digest));
    if (!values.yes) {
      return printError(
        {
          code: "consent_required",
          message: `Nothing installed. To install exactly these bytes run: ${commandHint(...(retryWords ?? ["apps", "install", source]), "--consent", reviewed.body.digest)}`,
        },
        json,
      );
    }
    // --yes installs only the digest it just showed: a change since then is refused.
    consent = reviewed.body.digest as string;
  }
  const installId = randomBytes(8).toString("hex");
  const seen = new Set<string>();
  const printNewSteps = async () => {
    const progress = await callGateway(home, "apps-install", "GET", `/api/apps/installs/${installId}`).catch(
      () => null,
    );
    for (const step of progress?.body?.steps ?? []) {
      const key = `${step.step}:${step.status}`;
      if (seen.has(key)) continue;
      seen.add(key);
      process.stderr.write(
        `  ${safeLine(step.step.replace(/_/g, " "))}: ${safeLine(step.status)}${step.message ? ` (${safeLine(step.message)})` : ""}\n`,
      );
    }
  };
  const poll = setInterval(() => void printNewSteps(), 250);
  let answer: GatewayAnswer;
  try {
    answer = await callGateway(home, "apps-install", "POST", "/api/apps", {
      source,
      consent,
      install_id: installId,
      ...(values["adopt-data"] ? { adopt_data: true } : {}),
    });
  } finally {
    clearInterval(poll);
  }
  // The steps finished since the last poll.
  await printNewSteps();
  if (answer.status !== 200) return answerError(answer, json);
  if (json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else
    process.stdout.write(
      `Installed ${safeLine(String(answer.body.app.name))} ${safeLine(String(answer.body.app.version))} (${safeLine(String(answer.body.digest))}).\n`,
    );
  return 0;
}

/** One change of the update's review against the consented one, as a line. */
export function changeLine(change: { field: string; before: unknown; after: unknown }): string {
  const closure = change.field === "npmClosure" ? closureDiffText(change.before, change.after) : null;
  if (closure !== null) return closure;
  if (change.field === "mcpRegistryEntry") return registryEntryChangeLine(change.before, change.after);
  const text = (value: unknown) => safeLine(JSON.stringify(value) ?? "null").slice(0, 200);
  return `  changed ${safeLine(change.field)}: ${text(change.before)} -> ${text(change.after)}\n`;
}

/** `apps update <name> <folder>`: no consent needed when nothing the owner consented to changes. */
export async function runAppsUpdate(
  home: string,
  name: string,
  folder: string,
  values: ConsentOptions,
  /** The words that update to these bytes again with --consent (default `apps update <name> <folder>`). */
  retryWords?: string[],
): Promise<number> {
  const json = Boolean(values.json);
  const source = resolve(folder);
  let consent = values.consent;
  if (consent === undefined) {
    const reviewed = await callGateway(home, "apps-update", "POST", "/api/apps/preview", { source, name });
    if (reviewed.status !== 200) return answerError(reviewed, json);
    // What the update changes of the app's files is shown whether or not it needs consent.
    if (!json) process.stderr.write(fileChangesLine(reviewed.body.files));
    if (reviewed.body.consentNeeded) {
      if (!json) {
        process.stderr.write(reviewText(reviewed.body.review, reviewed.body.digest));
        for (const change of reviewed.body.changes ?? []) process.stderr.write(changeLine(change));
      }
      if (!values.yes) {
        return printError(
          {
            code: "consent_required",
            message: `Nothing updated. To update to exactly these bytes run: ${commandHint(...(retryWords ?? ["apps", "update", name, source]), "--consent", reviewed.body.digest)}`,
          },
          json,
        );
      }
      consent = reviewed.body.digest as string;
    }
  }
  const installId = randomBytes(8).toString("hex");
  const seen = new Set<string>();
  const printNewSteps = async () => {
    const progress = await callGateway(home, "apps-update", "GET", `/api/apps/installs/${installId}`).catch(() => null);
    for (const step of progress?.body?.steps ?? []) {
      const key = `${step.step}:${step.status}`;
      if (seen.has(key)) continue;
      seen.add(key);
      process.stderr.write(
        `  ${safeLine(String(step.step).replace(/_/g, " "))}: ${safeLine(step.status)}${step.message ? ` (${safeLine(step.message)})` : ""}\n`,
      );
    }
  };
  const poll = setInterval(() => void printNewSteps(), 250);
  let answer: GatewayAnswer;
  try {
    answer = await callGateway(home, "apps-update", "POST", `/api/apps/${encodeURIComponent(name)}/update`, {
      source,
      install_id: installId,
      ...(consent !== undefined ? { consent } : {}),
    });
  } finally {
    clearInterval(poll);
  }
  await printNewSteps();
  if (answer.status !== 200) return answerError(answer, json);
  if (json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else
    process.stdout.write(
      `Updated ${safeLine(answer.body.app.name)} to ${safeLine(answer.body.app.version)} (${safeLine(String(answer.body.digest))}).\n`,
    );
  return 0;
}

export async function runAppsList(home: string, values: { json?: boolean; parked?: boolean }): Promise<number> {
  if (values.parked) return runParkedList(home, Boolean(values.json));
  const answer = await callGateway(home, "apps-list", "GET", "/api/apps");
  if (answer.status !== 200) return answerError(answer, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  if (answer.body.apps.length === 0)
    process.stdout.write("No apps installed. Install one with `personalclaw apps install <folder>`.\n");
  for (const app of answer.body.apps) {
    const backend = app.backend
      ? app.backend.running
        ? app.backend.healthy
          ? "healthy"
          : "unhealthy"
        : "stopped"
      : "no backend";
    // The version is the app's own text: a CR or ESC[?7l there could redraw the line as another app's.
    process.stdout.write(safeRow([app.name, app.version, app.origin, app.enabled ? "enabled" : "disabled", backend]));
  }
  return 0;
}

/** enable, disable, restart and uninstall: one POST (or DELETE) on the app's route. */
export async function runAppAction(
  action: "enable" | "disable" | "restart" | "uninstall",
  home: string,
  appName: string,
  values: { json?: boolean; "purge-data"?: boolean },
): Promise<number> {
  const json = Boolean(values.json);
  const name = encodeURIComponent(appName);
  const answer =
    action === "uninstall"
      ? await callGateway(
          home,
          `apps-${action}`,
          "DELETE",
          `/api/apps/${name}`,
          values["purge-data"] ? { purge_data: true } : {},
        )
      : await callGateway(home, `apps-${action}`, "POST", `/api/apps/${name}/${action}`, {});
  if (answer.status !== 200) return answerError(answer, json);
  if (json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else if (action === "uninstall") process.stdout.write(uninstalledText(appName, answer.body));
  else if (action === "restart") process.stdout.write(`${appName}'s backend was restarted.\n`);
  else process.stdout.write(`${appName} is ${action}d${answer.body.changed === false ? " (it already was)" : ""}.\n`);
  return 0;
}

/** What an uninstall did, in sentences: the data kept (and where) and the secret assignments taken back. */
function uninstalledText(
  appName: string,
  body: { data_kept?: boolean; secrets_taken_back?: Array<{ as: string; secret: string | null }> },
): string {
  const lines = [
    body.data_kept
      ? `Uninstalled ${appName}; its data was kept, parked at apps/.${appName}.data in the PersonalClaw home (installing ${appName} again offers to adopt it).`
      : `Uninstalled ${appName}; its data was deleted.`,
  ];
  const takenBack = body.secrets_taken_back ?? [];
  if (takenBack.length > 0)
    lines.push(
      `Its secret assignments were taken back (${takenBack.map(({ as, secret: stored }) => (stored && stored !== as ? `${stored} as ${as}` : (stored ?? as))).join(", ")}); the stored secrets stay.`,
    );
  return `${lines.join("\n")}\n`;
}

/** `apps list --parked`: the data/ folders keep-data uninstalls left, with whose install each is. */
async function runParkedList(home: string, json: boolean): Promise<number> {
  const answer = await callGateway(home, "apps-list", "GET", "/api/apps/parked");
  if (answer.status !== 200) return answerError(answer, json);
  if (json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  if (answer.body.parked.length === 0) process.stdout.write("No data is parked: no uninstall kept an app's data.\n");
  for (const p of answer.body.parked) process.stdout.write(safeRow([p.name, p.version, p.parkedAt, p.consentDigest]));
  return 0;
}

/** `apps purge <name>`: deletes the parked data/ of a name for good. */
export async function runAppsPurge(home: string, name: string, values: { json?: boolean }): Promise<number> {
  const json = Boolean(values.json);
  const answer = await callGateway(home, "apps-purge", "DELETE", `/api/apps/parked/${encodeURIComponent(name)}`, {});
  if (answer.status !== 200) return answerError(answer, json);
  if (json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else process.stdout.write(`Deleted the parked data of ${name}.\n`);
  return 0;
}
