// `personalclaw mcp path|list|run|retry` and `personalclaw apps jobs <name>`.
//
// `mcp run <app> <server>` is the command every app entry in <home>/mcp.json names: an agent
// starts it and speaks MCP over its stdin and stdout. It runs in this CLI process, not in the
// bridge: it reads the server's definition from the installed app's own app.json, asks the
// running gateway whether that exact definition may start (installed, enabled, on, not failing,
// consented: POST /api/internal/mcp/<app>/<server>/launch), starts the consented command in the
// app's sandbox (host-bridge/sandbox/run-mcp-server.ts) and reports how the start went. A server
// with a network grant gets an egress broker started here, in this process, on a socket of its
// own in the home's runtime folder: the broker's rule (network-grant.ts, address-policy.ts) is
// the bridge's, and its decisions go to the security log through the gateway as the bridge's do.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { z } from "zod";
import { JobViewSchema } from "../../kernel/contracts/scheduled-jobs";
import {
  McpAliveAnswerSchema,
  McpLaunchAnswerSchema,
  type McpLaunchAnswer,
  McpServerViewSchema,
  mcpDefinition,
  mcpDefinitionDigest,
  mcpKey,
  MCP_FIRST_START_MS,
} from "../../kernel/contracts/mcp";
import { grantPatterns } from "../../kernel/rules/network-grant";
import { safeLine } from "../../kernel/text/text-safety";
import { EgressBrokers } from "../egress/brokers";
import { originTrustOf, type OriginTrust } from "../egress/origin-tls";
import { installedAppBrokeredSecrets } from "../secrets/brokered-secrets";
import { serverHeldSecrets } from "../secrets/server-held-secrets";
import { homePaths, releaseRuntimeDir, runtimeDir } from "../home";
import { childLimits, readOwnerConfig } from "../owner-config";
import { mediatedStdio } from "./mcp-gate";
import { boundsAvailability } from "../sandbox/bounds";
import { sandboxAvailability } from "../sandbox/bubblewrap";
import { runMcpServer } from "../sandbox/run-mcp-server";
import { appInterpreter } from "../sandbox/app-interpreter";
import { isHeld, registerRun } from "../mcp/running-servers";
import { parentEnvironment } from "../settings";
import { callGateway, parseAnswer, type GatewayAnswer } from "./gateway-client";
import { UsageError } from "./usage-error";
import { packagesHoldBack } from "../durability/restore-packages";
import { EXIT_FAILED, printRefusal } from "./print";

/** How often a running server asks whether it may go on. */
const MCP_ALIVE_POLL_MS = 2_000;
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `mcp path`: where the server map is, for an agent's settings. */
export async function runMcpPath(home: string, values: { json?: boolean }): Promise<number> {
  const path = homePaths(home).mcpJson;
  process.stdout.write(values.json ? `${JSON.stringify({ path })}\n` : `${path}\n`);
  return 0;
}

export async function runMcpList(home: string, values: { json?: boolean }): Promise<number> {
  const answer = await callGateway(home, "mcp-list", "GET", "/api/mcp");
  const parsed = parseAnswer(answer, z.object({ servers: z.array(McpServerViewSchema) }));
  if (!parsed.ok) return printRefusal(parsed.answer, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  const servers = parsed.body.servers;
  if (servers.length === 0) process.stdout.write("No app declares an MCP server.\n");
  for (const s of servers) {
    const last = s.lastStart
      ? `last start ${s.lastStart.at}: ${s.lastStart.ok ? "answered" : `failed (exit ${s.lastStart.exitCode ?? "-"}: ${s.lastStart.reason ?? "no reason"})`}`
      : "never started";
    process.stdout.write(
      `${safeLine(s.key)}  ${s.transport}  ${s.state}  failed starts ${s.failedStarts}  ${safeLine(last)}\n`,
    );
  }
  return 0;
}

export async function runMcpRetry(
  home: string,
  app: string,
  server: string,
  values: { json?: boolean },
): Promise<number> {
  const answer = await callGateway(
    home,
    "mcp-retry",
    "POST",
    `/api/mcp/${encodeURIComponent(app)}/${encodeURIComponent(server)}/retry`,
    {},
  );
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  process.stdout.write(
    values.json
      ? `${JSON.stringify(answer.body)}\n`
      : `${safeLine(`${app}:${server}`)} will be started at its next launch.\n`,
  );
  return 0;
}

export async function runAppsJobs(
  home: string,
  name: string,
  values: { json?: boolean; from?: string; count?: number },
): Promise<number> {
  const query = new URLSearchParams();
  if (values.count !== undefined || values.from !== undefined) query.set("count", String(values.count ?? 5));
  if (values.from !== undefined) query.set("from", new Date(values.from).toISOString());
  const answer = await callGateway(
    home,
    "apps-jobs",
    "GET",
    `/api/apps/${encodeURIComponent(name)}/jobs${query.size ? `?${query}` : ""}`,
  );
  const parsed = parseAnswer(answer, z.object({ jobs: z.array(JobViewSchema) }));
  if (!parsed.ok) return printRefusal(parsed.answer, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  const jobs = parsed.body.jobs;
  if (jobs.length === 0) process.stdout.write("The app has no scheduled jobs.\n");
  for (const job of jobs) {
    process.stdout.write(
      `${safeLine(job.name)}  ${safeLine(job.schedule)} ${safeLine(job.timezone)}  POST ${safeLine(job.route)}  next ${job.nextFire ?? (job.paused ? "(app disabled)" : "none")}\n`,
    );
    if (job.upcoming) {
      const local = new Intl.DateTimeFormat("sv-SE", {
        timeZone: job.timezone,
        dateStyle: "short",
        timeStyle: "short",
      });
      process.stdout.write(`  upcoming${job.paused ? " (none fires while the app is disabled)" : ""}:\n`);
      for (const at of job.upcoming)
        process.stdout.write(`    ${at}  ${local.format(new Date(at))} ${safeLine(job.timezone)}\n`);
      if (job.upcoming.length === 0) process.stdout.write("    none: the schedule never fires again\n");
    }
    for (const run of job.history.slice(0, 10)) {
      process.stdout.write(
        `  ${run.startedAt}  ${run.outcome}  ${run.status ?? "-"}  ${run.durationMs} ms${run.error ? `  ${safeLine(run.error)}` : ""}\n`,
      );
    }
  }
  return 0;
}

/** The definition digest of what the installed folder declares now; null when it declares nothing readable. */
async function definitionOnDisk(home: string, app: string, server: string): Promise<string> {
  const manifestPath = join(homePaths(home).apps, app, "app.json");
  if (!existsSync(manifestPath)) return "none";
  try {
    const manifest = AppManifestSchema.parse(JSON.parse(readFileSync(manifestPath, "utf8")));
    const definition = mcpDefinition(manifest, server);
    return definition ? await mcpDefinitionDigest(definition) : "none";
  } catch {
    return "unreadable";
  }
}

/** Asks the gateway to launch; a start of the same server under way is waited for (MCP-05). */
async function askToLaunch(
  home: string,
  app: string,
  server: string,
  definitionDigest: string,
): Promise<GatewayAnswer> {
  const deadline = Date.now() + MCP_FIRST_START_MS;
  for (;;) {
    const answer = await callGateway(
      home,
      `mcp:${app}:${server}`,
      "POST",
      `/api/internal/mcp/${app}/${server}/launch`,
      { definitionDigest },
    );
    if (answer.status !== 409 || answer.body?.error?.code !== "mcp_server_starting" || Date.now() > deadline)
      return answer;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The egress brokers of this run: the bridge's rule, each decision a security-log row through the gateway. */
function reportedEgressBrokers(
  home: string,
  app: string,
  server: string,
  runtime: string,
  trust: () => OriginTrust,
): EgressBrokers {
  return new EgressBrokers(
    runtime,
    (decision) => {
      const target = `${decision.host}:${decision.port}`;
      void callGateway(home, `mcp:${app}:${server}`, "POST", "/api/internal/sel/append", {
        kind: decision.outcome === "allowed" ? "egress_allowed" : (decision.code ?? "egress_refused"),
        outcome: decision.outcome,
        principal: `app:${decision.app}`,
        subject: target,
        group: target,
        detail: { via: `mcp ${server}`, ...(decision.reason ? { reason: decision.reason } : {}) },
      }).catch(() => {});
    },
    trust,
  );
}

/** The app's placeholder secrets for this server; a copy bound to another app or install is a row, as at a backend's start. */
async function brokeredSecretsOf(home: string, app: string, server: string, appDir: string, digest: string) {
  const opened = installedAppBrokeredSecrets(home, appDir, { app, digest });
  await bindingsRefused(home, app, server, opened.refused);
  return opened.secrets;
}

/** The server's declared env with the value of each secret it holds (`${secret:NAME}`) for this install; a copy bound elsewhere is a row. */
async function heldSecretsOf(home: string, app: string, server: string, appDir: string, launch: McpLaunchAnswer) {
  const opened = serverHeldSecrets(home, appDir, { app, digest: launch.consentDigest }, launch.env);
  await bindingsRefused(home, app, server, opened.refused);
  return opened.env;
}

async function bindingsRefused(home: string, app: string, server: string, refused: readonly string[]) {
  for (const name of refused)
    await callGateway(home, `mcp:${app}:${server}`, "POST", "/api/internal/sel/append", {
      kind: "secret_binding_refused",
      outcome: "refused",
      principal: "internal:bridge",
      subject: app,
      detail: { name, via: `mcp ${server}` },
    }).catch(() => {});
}

/**
 * Disabling, uninstalling or updating the app, or the owner's off switch, ends a running
 * server too (MCP-01): asked every few seconds; an unanswered question is not a no. SIGTERM
 * (an update ending the app's servers) or SIGINT ends the server, and is never lost: one that
 * comes while the server is still being set up keeps it from starting. `release` stops
 * listening and asking.
 */
function endWhenNoLongerAllowed(
  home: string,
  app: string,
  server: string,
  launch: McpLaunchAnswer,
): { signal: AbortSignal; release: () => void } {
  const stopping = new AbortController();
  const endFor = (reason: string) => {
    if (!stopping.signal.aborted) process.stderr.write(`personalclaw: ending ${app}:${server}: ${reason}\n`);
    stopping.abort();
  };
  const onSignal = () => (isHeld(home, app) ? endFor("the app is being updated") : stopping.abort());
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  const watch = setInterval(() => {
    if (isHeld(home, app)) return endFor("the app is being updated");
    void callGateway(
      home,
      `mcp:${app}:${server}`,
      "GET",
      `/api/internal/mcp/${app}/${server}/alive?consent=${encodeURIComponent(launch.consentDigest)}${launch.foldersStamp ? `&folders=${encodeURIComponent(launch.foldersStamp)}` : ""}`,
    )
      .then((answer) => {
        const verdict = parseAnswer(answer, McpAliveAnswerSchema);
        if (verdict.ok && !verdict.body.alive) endFor(safeLine(verdict.body.reason ?? "it may not run"));
      })
      .catch(() => {});
  }, MCP_ALIVE_POLL_MS);
  return {
    signal: stopping.signal,
    release: () => {
      clearInterval(watch);
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    },
  };
}

/** A restored app runs only once its packages are installed again (restore-packages.ts): said, and put on the server's row. */
async function heldBackForPackages(home: string, app: string, server: string, startId: string): Promise<boolean> {
  const heldBack = packagesHoldBack(home, app);
  if (heldBack === null) return false;
  process.stderr.write(`personalclaw: ${safeLine(heldBack.message)} (${heldBack.code})\n`);
  await callGateway(home, `mcp:${app}:${server}`, "POST", `/api/internal/mcp/${app}/${server}/started`, {
    startId,
    ok: false,
    exitCode: null,
    reason: `${heldBack.code}: ${heldBack.message}`.slice(0, 500),
  }).catch(() => {});
  return true;
}

export async function runMcpRun(home: string, app: string, server: string): Promise<number> {
  if (!AppManifestSchema.shape.name.safeParse(app).success || !SERVER_NAME.test(server))
    throw new UsageError(`'mcp run' needs an app name and a server name it declares, not '${app}' '${server}'`, [
      "mcp",
      "run",
    ]);
  const answer = await askToLaunch(home, app, server, await definitionOnDisk(home, app, server));
  if (answer.status !== 200) return printRefusal(answer, false);
  const launch = McpLaunchAnswerSchema.parse(answer.body);
  if (await heldBackForPackages(home, app, server, launch.startId)) return EXIT_FAILED;

  const config = readOwnerConfig(home);
  if (!config.ok) {
    process.stderr.write(`personalclaw: ${safeLine(config.reason)}\n`);
    return 1;
  }
  const parentEnv = parentEnvironment();
  const paths = homePaths(home);
  const runtime = runtimeDir(home, parentEnv.XDG_RUNTIME_DIR);
  const egress = reportedEgressBrokers(
    home,
    app,
    server,
    runtime,
    originTrustOf(config.config.egress.extra_ca_certs, parentEnv.SSL_CERT_FILE, (line) =>
      process.stderr.write(`personalclaw: ${line}\n`),
    ),
  );
  const preferred = config.config.sandbox.bounds;
  const appDir = join(paths.apps, app);
  let reported: Promise<unknown> = Promise.resolve();
  let limitRow: Promise<unknown> = Promise.resolve();
  let folderRow: Promise<unknown> = Promise.resolve();
  // An update stops every server of its app before it copies data/ and holds new ones back
  // until it is over (running-servers.ts): this run is recorded before it looks for the hold.
  const record = registerRun(home, app, server);
  if (record === null) {
    process.stderr.write(`personalclaw: ${app} is being updated; start ${app}:${server} again once it is done\n`);
    await egress.stopAll();
    releaseRuntimeDir(runtime);
    return 1;
  }
  const stopping = endWhenNoLongerAllowed(home, app, server, launch);
  const mediation = await mediatedStdio(home, app, server, launch, config.config);
  try {
    // The sandbox probe can take seconds on a loaded machine: a stop meanwhile kills it.
    const sandbox = await sandboxAvailability(parentEnv.PATH, stopping.signal);
    return await runMcpServer(
      {
        app: { name: app, appDir, dataDir: join(appDir, "data"), hasStorage: launch.hasStorage },
        server,
        command: { file: appInterpreter(appDir, launch.command), args: launch.args },
        declaredEnv: await heldSecretsOf(home, app, server, appDir, launch),
        egress: grantPatterns(launch.network),
        folders: launch.folders ?? [],
        brokered: await brokeredSecretsOf(home, app, server, appDir, launch.consentDigest),
        stop: stopping.signal,
        onSpawned: (pid) => record.serverSpawned(pid),
        onStorageLimit: (usedBytes, dataBytes) => {
          limitRow = callGateway(home, `mcp:${app}:${server}`, "POST", "/api/internal/sel/append", {
            kind: "app_limit_reached",
            outcome: "refused",
            principal: `app:${app}`,
            subject: app,
            detail: { limit: "storage", via: `mcp ${server}`, used_bytes: usedBytes, data_bytes: dataBytes },
          }).catch(() => {});
        },
        // Evidence, as a backend's refused start is: the start's outcome (reported below) puts the code on its row.
        onFolderRefused: (refusal) => {
          folderRow = callGateway(home, `mcp:${app}:${server}`, "POST", "/api/internal/sel/append", {
            kind: "mcp_start_refused",
            outcome: "refused",
            principal: `app:${app}`,
            subject: mcpKey(app, server),
            detail: { code: refusal.code, via: `mcp ${server}`, need: refusal.need, path: refusal.path },
          }).catch(() => {});
        },
      },
      {
        home,
        ownerHome: homedir(),
        sandboxMode: config.config.sandbox.mode,
        sandbox,
        bounds: boundsAvailability(parentEnv.PATH, preferred === "auto" ? undefined : preferred),
        limits: childLimits(config.config),
        egress,
        parentEnv,
        passthrough: config.config.sandbox.env_passthrough,
        log: (line) => process.stderr.write(`${line}\n`),
      },
      { stdin: mediation.toChild, stdout: mediation.fromChild, stderr: process.stderr },
      (outcome) => {
        reported = callGateway(home, `mcp:${app}:${server}`, "POST", `/api/internal/mcp/${app}/${server}/started`, {
          startId: launch.startId,
          ok: outcome.ok,
          exitCode: outcome.ok ? null : outcome.exitCode,
          reason: outcome.ok ? null : outcome.reason.slice(0, 500),
        }).catch(() => {});
      },
    );
  } finally {
    // Whatever ended it (the server, a stop, an error setting it up): nothing of it stays.
    stopping.release();
    await mediation.end();
    record.end();
    await reported;
    await limitRow;
    await folderRow;
    await egress.stopAll();
    releaseRuntimeDir(runtime);
    // The agent may keep our stdin open after the server died: let go of it, so this process ends
    // and the agent sees its server's end.
    process.stdin.destroy();
  }
}
