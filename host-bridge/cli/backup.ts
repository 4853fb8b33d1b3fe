// `personalclaw backup`: asks the running gateway for one archive of the whole home
// (POST /api/durability/backup, proving presence with the local secret) and writes it under a
// temporary name beside --out, checks it (container, signature, every part's SHA-256), flushes
// it and only then renames it: a kill at any step leaves no half archive under the final name.
// The passphrase comes from --passphrase-file, standard input or a prompt — never an argument,
// which every local user can read in /proc.
import { randomBytes } from "node:crypto";
import { constants, readFileSync, statSync } from "node:fs";
import { open, readdir, rename, rm } from "node:fs/promises";
import { request } from "node:http";
import { basename, dirname, join, resolve } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { WORK_HEADER } from "../../kernel/contracts/internal-work";
import { BackupPassphraseSchema } from "../../kernel/contracts/durability";
import { safeLine } from "../../kernel/text/text-safety";
import { syncFolder } from "../private-file";
import { OpenedArchive } from "../durability/archive-reader";
import { pauseAtNamedStep } from "../install/test-pause";
import { runningGateway } from "./gateway-client";
import { readSecretValue } from "./settings";

/** Prints a refusal as the CLI does everywhere: the sentence on stderr, or the envelope as JSON. */
export function printCliError(error: GatewayError, json: boolean): number {
  if (json) process.stdout.write(`${JSON.stringify(error.toEnvelope())}\n`);
  else process.stderr.write(`personalclaw: ${safeLine(error.message)} (${error.code})\n`);
  return 1;
}

/** The passphrase: the first line of --passphrase-file, else standard input or a prompt that does not echo. */
export async function readPassphrase(file: string | undefined): Promise<string> {
  const text =
    file === undefined
      ? await readSecretValue("the archive's passphrase")
      : readFileSync(file, "utf8").split(/\r?\n/)[0]!;
  const parsed = BackupPassphraseSchema.safeParse(text);
  if (!parsed.success)
    throw new GatewayError("bad_request", { vars: { reason: "a passphrase is 8 to 1024 characters" } });
  return parsed.data;
}

/** Progress on stderr for long work: one line every 16 MiB received. */
function progressLine(json: boolean): (bytes: number) => void {
  let next = 16 * 1024 * 1024;
  return (bytes) => {
    if (json || bytes < next) return;
    process.stderr.write(`backup: ${Math.floor(bytes / (1024 * 1024))} MiB received\n`);
    next += 16 * 1024 * 1024;
  };
}

/** Streams the gateway's answer into `partial`; answers the status and, for a refusal, its JSON. */
function receive(home: string, passphrase: string, partial: string, progress: (bytes: number) => void) {
  const gateway = runningGateway(home);
  const payload = JSON.stringify({ passphrase });
  return new Promise<{ status: number; refusal: unknown }>((resolvePromise, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: gateway.port,
        method: "POST",
        path: "/api/durability/backup",
        headers: {
          Host: `127.0.0.1:${gateway.port}`,
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(payload),
          "X-Internal-Secret": gateway.secret,
          "X-Local-Secret": gateway.secret,
          [WORK_HEADER]: "cli:backup",
        },
      },
      (res) => {
        void (async () => {
          const status = res.statusCode ?? 0;
          if (status !== 200) {
            const chunks: Buffer[] = [];
            for await (const chunk of res) chunks.push(chunk as Buffer);
            let refusal: unknown = null;
            try {
              refusal = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
              // not an envelope
            }
            return resolvePromise({ status, refusal });
          }
          const fh = await open(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
          try {
            let bytes = 0;
            for await (const chunk of res) {
              await fh.write(chunk as Buffer);
              bytes += (chunk as Buffer).length;
              progress(bytes);
              if (TEST_BUILD)
                await pauseAtNamedStep(home, "backup-cli:receive", (line) => process.stderr.write(`${line}\n`));
            }
            if (!res.complete) throw new Error("the gateway's answer was cut short");
            await fh.sync();
          } finally {
            await fh.close();
          }
          resolvePromise({ status, refusal: null });
        })().catch(reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The `.partial` files a killed backup to `out` left beside it. */
async function sweepPartials(out: string): Promise<void> {
  const pattern = new RegExp(`^\\.${basename(out).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.[0-9a-f]{12}\\.partial$`);
  for (const name of await readdir(dirname(out)).catch(() => [] as string[]))
    if (pattern.test(name)) await rm(join(dirname(out), name), { force: true });
}

export async function runBackup(
  home: string,
  values: { out?: string; "passphrase-file"?: string; json?: boolean },
): Promise<number> {
  const json = Boolean(values.json);
  const out = resolve(values.out ?? `personalclaw-${new Date().toISOString().slice(0, 10)}.pcbackup`);
  const partial = join(dirname(out), `.${basename(out)}.${randomBytes(6).toString("hex")}.partial`);
  try {
    await sweepPartials(out);
    runningGateway(home); // GatewayNotRunning before the passphrase is asked for
    const passphrase = await readPassphrase(values["passphrase-file"]);
    if (!json) process.stderr.write("backup: the gateway is writing the archive\n");
    const answer = await receive(home, passphrase, partial, progressLine(json));
    if (answer.status !== 200) {
      const body = answer.refusal as { error?: { code?: string; message?: string } } | null;
      const envelope = body?.error?.code
        ? body
        : { error: { code: "unexpected_answer", message: `The gateway answered ${answer.status}.` } };
      if (json) process.stdout.write(`${JSON.stringify(envelope)}\n`);
      else
        process.stderr.write(
          `personalclaw: ${safeLine(envelope.error!.message ?? "")} (${safeLine(envelope.error!.code ?? "")})\n`,
        );
      return 1;
    }
    // What arrived is checked whole before it takes the final name.
    const archive = await OpenedArchive.open(partial);
    let summary;
    try {
      await archive.verifyParts();
      summary = {
        path: out,
        bytes: statSync(partial).size,
        parts: archive.manifest.parts.length,
        apps: archive.manifest.apps.map((a) => a.name),
        log_head: archive.manifest.log.head,
        created_at: archive.manifest.created_at,
      };
    } finally {
      await archive.close();
    }
    if (TEST_BUILD) await pauseAtNamedStep(home, "backup-cli:rename", (line) => process.stderr.write(`${line}\n`));
    await rename(partial, out);
    syncFolder(dirname(out));
    if (json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else
      process.stdout.write(
        `Wrote ${out} (${summary.bytes} bytes, ${summary.parts} parts, apps: ${summary.apps.map((a) => safeLine(a)).join(", ") || "none"}; security log head ${summary.log_head.seq}).\n`,
      );
    return 0;
  } catch (error) {
    if (error instanceof GatewayError) return printCliError(error, json);
    throw error;
  } finally {
    await rm(partial, { force: true });
  }
}
