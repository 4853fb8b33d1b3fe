// `personalclaw apps dev <folder>`: the author's loop on their own machine. It previews the
// folder, watches it, and after each quiet spell re-previews it, says what changed, and offers
// the install (or the update) of exactly the bytes just reviewed: the offer goes through the
// gateway's normal consent path with that digest, so a folder that changes between the review
// and the yes is refused by the gateway, never installed unseen. Nothing here skips the
// quarantine or the scan: every review is the gateway's (or the offline preview's) own.
import { watch } from "node:fs";
import { resolve, sep } from "node:path";
import { createInterface } from "node:readline";
import { safeLine } from "../../kernel/text/text-safety";
import { changeLine, preview, runAppsInstall, runAppsUpdate } from "./apps";
import { callGateway, GatewayNotRunning, type GatewayAnswer } from "./gateway-client";
import { commandHint } from "./invocation";
import { reviewText } from "./review-text";

const DEFAULT_DEBOUNCE_MS = 300;
/** Folders the backend or an install writes into: a change there is not the author's. */
const NOT_SOURCE = new Set(["data", "venv", ".venv", "node_modules", "__pycache__", ".git"]);

interface Offer {
  kind: "install" | "update";
  name: string;
  digest: string;
}

/** Whether the name is installed on the running gateway; null when no gateway runs. */
async function isInstalled(home: string, name: string): Promise<boolean | null> {
  try {
    const answer = await callGateway(home, "apps-dev", "GET", `/api/apps/${encodeURIComponent(name)}`);
    return answer.status === 200;
  } catch (error) {
    if (error instanceof GatewayNotRunning) return null;
    throw error;
  }
}

/** Reviews the folder as the install (or update) would; prints it; answers what may be offered. */
async function review(home: string, folder: string): Promise<Offer | null> {
  const first = await preview(home, folder);
  if (first.status !== 200) {
    const error = first.body?.error ?? { code: "unexpected_answer", message: `The gateway answered ${first.status}.` };
    process.stdout.write(
      `The folder does not preview: ${safeLine(String(error.message))} (${safeLine(String(error.code))})\n`,
    );
    return null;
  }
  const name = String(first.body.review?.app?.name ?? "");
  const installed = await isInstalled(home, name);
  let reviewed: GatewayAnswer = first;
  if (installed) {
    reviewed = await callGateway(home, "apps-dev", "POST", "/api/apps/preview", { source: folder, name });
    if (reviewed.status !== 200) {
      process.stdout.write(`The update does not preview: ${safeLine(String(reviewed.body?.error?.message))}\n`);
      return null;
    }
  }
  process.stdout.write(reviewText(reviewed.body.review, reviewed.body.digest));
  for (const change of reviewed.body.changes ?? []) process.stdout.write(changeLine(change));
  if (installed === null) {
    process.stdout.write(`No gateway is running to install it; start one with: ${commandHint("start")}\n`);
    return null;
  }
  return { kind: installed ? "update" : "install", name, digest: String(reviewed.body.digest) };
}

export async function runAppsDev(
  home: string,
  folderArg: string,
  values: { yes?: boolean; "debounce-ms"?: number },
): Promise<number> {
  const folder = resolve(folderArg);
  const debounceMs = values["debounce-ms"] ?? DEFAULT_DEBOUNCE_MS;
  // Answers come a line at a time from stdin (a terminal, or a script driving it).
  const lines: string[] = [];
  const waiting: Array<(line: string | null) => void> = [];
  let stdinEnded = false;
  if (!values.yes) {
    const reader = createInterface({ input: process.stdin });
    reader.on("line", (line) => (waiting.length ? waiting.shift()!(line) : lines.push(line)));
    reader.on("close", () => {
      stdinEnded = true;
      for (const resolveLine of waiting.splice(0)) resolveLine(null);
    });
  }
  const nextLine = () =>
    lines.length
      ? Promise.resolve(lines.shift()!)
      : stdinEnded
        ? Promise.resolve(null)
        : new Promise<string | null>((r) => waiting.push(r));

  const offer = async (o: Offer): Promise<void> => {
    const question = `${o.kind === "install" ? "Install" : "Update"} ${o.name} with exactly these bytes (${o.digest})? [y/N] `;
    let accepted = values.yes === true;
    if (accepted) process.stdout.write(`${question}y (--yes)\n`);
    else {
      process.stdout.write(question);
      const answer = await nextLine();
      accepted = answer !== null && /^y(es)?$/i.test(answer.trim());
      if (answer === null) process.stdout.write("\n");
    }
    if (!accepted) {
      process.stdout.write("Not installed; the next change is reviewed again.\n");
      return;
    }
    if (o.kind === "install") await runAppsInstall(home, folder, { consent: o.digest });
    else await runAppsUpdate(home, o.name, folder, { consent: o.digest });
  };

  let changed = new Set<string>();
  let running = false;
  let again = false;
  const cycle = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        if (changed.size > 0) {
          process.stdout.write(
            `\nChanged: ${[...changed]
              .sort()
              .map((path) => safeLine(path))
              .join(", ")}\n`,
          );
          changed = new Set();
        }
        const o = await review(home, folder);
        if (o) await offer(o);
        process.stdout.write(`Watching ${folder} for changes (Ctrl-C to stop).\n`);
      } while (again);
    } catch (error) {
      process.stdout.write(`The review failed: ${safeLine(error instanceof Error ? error.message : String(error))}\n`);
    } finally {
      running = false;
    }
  };

  let timer: NodeJS.Timeout | null = null;
  const watcher = watch(folder, { recursive: true }, (_event, file) => {
    const path = String(file ?? "");
    if (path === "" || NOT_SOURCE.has(path.split(sep)[0])) return;
    changed.add(path);
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      void cycle();
    }, debounceMs);
  });
  await cycle();
  await new Promise<void>((resolveStop) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => resolveStop());
  });
  watcher.close();
  if (timer) clearTimeout(timer);
  process.stdin.destroy();
  return 0;
}
