// `personalclaw doctor [--json]`: one row per thing this machine and home need, each
// ok/warn/fail with a sentence saying how to fix it. Exit 1 when a row fails.
import { existsSync, statSync } from "node:fs";
import { authModeInForce } from "../../kernel/contracts/auth-mode";
import { homePaths, type HomePaths } from "../home";
import { childLimits, readOwnerConfig, sessionTtlInForce } from "../owner-config";
import { sandboxAvailability, type SandboxAvailability } from "../sandbox/bubblewrap";
import { boundsAvailability, describeLimits } from "../sandbox/bounds";
import { parentEnvironment, type Settings } from "../settings";
import { readLiveGateway } from "./gateway-file";
import { workerdBinary, workerdVersion } from "./package-facts";
import { readUnacknowledgedAnchor } from "../sel-anchor";
import { findSetpriv } from "../supervisor/workerd-supervisor";
import { callGateway } from "./gateway-client";
import { commandHint } from "./invocation";
import { existsSync as exists, readdirSync } from "node:fs";
import { join } from "node:path";

export interface DoctorRow {
  name: string;
  status: "ok" | "warn" | "fail";
  message: string;
}

function modeRow(name: string, path: string, expected: number, missing: DoctorRow): DoctorRow {
  if (!existsSync(path)) return missing;
  const mode = statSync(path).mode & 0o777;
  if ((mode & ~expected) === 0) return { name, status: "ok", message: `${path} is ${mode.toString(8)}.` };
  return {
    name,
    status: "fail",
    message: `${path} is ${mode.toString(8)}; run \`chmod ${expected.toString(8)} ${path}\`.`,
  };
}

/** Which host user an app child is: never root, and doctor says so. */
function childUserRow(sandbox: SandboxAvailability): DoctorRow {
  const identity = sandbox.childIdentity;
  if (identity)
    return {
      name: "child user",
      status: "ok",
      message: `The gateway runs as root: every app child runs as ${identity.name} (uid ${identity.uid}, gid ${identity.gid}) with no capabilities, never as root; its data/ is handed to that user.`,
    };
  if (process.getuid?.() === 0)
    return {
      name: "child user",
      status: "fail",
      message:
        "The gateway runs as root and no app child can be started as an unprivileged user (see the bubblewrap row).",
    };
  return {
    name: "child user",
    status: "ok",
    message: `App children run as you (uid ${process.getuid?.() ?? "?"}) with no capabilities${sandbox.userNamespace ? ", in their own user namespace" : ""}.`,
  };
}

/** Every doctor row for these settings, in the order doctor prints them. */
export async function doctorRows(settings: Settings): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [nodeRow(), workerdRow()];
  // The same probe the supervisor asks before every start, so doctor cannot say ok while backends refuse.
  const sandbox = await sandboxAvailability(parentEnvironment().PATH);
  rows.push(bubblewrapRow(sandbox), childUserRow(sandbox));
  const paths = homePaths(settings.home);
  rows.push(...homeRows(paths));
  rows.push(...configRows(readOwnerConfig(paths.home), paths.home));
  const gateway = readLiveGateway(paths);
  rows.push(
    gateway
      ? { name: "gateway", status: "ok", message: `Running (pid ${gateway.pid}) at http://127.0.0.1:${gateway.port}/.` }
      : { name: "gateway", status: "warn", message: `Not running; start it with: ${commandHint("start")}` },
  );
  rows.push(anchorRow(paths.home), setprivRow());
  if (gateway) rows.push(await unrecordedAppsRow(paths.apps, paths.home));
  if (TEST_BUILD) {
    rows.push({
      name: "test build",
      status: "fail",
      message:
        "This is the test build: any caller can move the gateway's clock (and so outlive expiries); it is for the test suite only — run bin/personalclaw.mjs.",
    });
  }
  rows.push(authModeRow(settings));
  return rows;
}

function nodeRow(): DoctorRow {
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 20 || (major === 20 && minor >= 19)
    ? { name: "node", status: "ok", message: `Node ${process.versions.node}.` }
    : {
        name: "node",
        status: "fail",
        message: `Node ${process.versions.node} is too old; install Node 20.19 or newer.`,
      };
}

function workerdRow(): DoctorRow {
  const workerd = workerdVersion();
  return workerd !== null
    ? { name: "workerd", status: "ok", message: `${workerd} at ${workerdBinary()}.` }
    : {
        name: "workerd",
        status: "fail",
        message: "The workerd binary is missing or cannot run; run `npm ci` in the PersonalClaw folder.",
      };
}

function bubblewrapRow(sandbox: SandboxAvailability): DoctorRow {
  return sandbox.ok
    ? {
        name: "bubblewrap",
        status: "ok",
        message: `${sandbox.path} starts the confinement sandbox every app child runs in${sandbox.userNamespace ? " (own user namespace)" : ""}, with a seccomp filter.`,
      }
    : {
        name: "bubblewrap",
        status: "fail",
        message: `${sandbox.reason ?? "bwrap cannot run"}; install it with \`apt-get install bubblewrap\` (app children refuse to start without it).`,
      };
}

/** The home folder and the local secret: there (once started) and closed to everyone but the owner. */
function homeRows(paths: HomePaths): DoctorRow[] {
  return [
    modeRow("home", paths.home, 0o700, {
      name: "home",
      status: "warn",
      message: `${paths.home} does not exist yet; \`${commandHint("start")}\` creates it.`,
    }),
    modeRow("local secret", paths.localSecret, 0o600, {
      name: "local secret",
      status: "warn",
      message: `${paths.localSecret} does not exist yet; \`${commandHint("start")}\` writes it.`,
    }),
  ];
}

/** What the owner's config.json sets: readable at all, the sandbox on, the session lifetime, the bounds. */
function configRows(config: ReturnType<typeof readOwnerConfig>, home: string): DoctorRow[] {
  if (!config.ok)
    return [{ name: "config", status: "fail", message: `${config.reason}; fix or remove ${home}/config.json.` }];
  const rows: DoctorRow[] = [];
  if (config.config.sandbox.mode === "off") {
    rows.push({
      name: "sandbox",
      status: "warn",
      message:
        'sandbox.mode is "off" in config.json: app backends run without bubblewrap and can read your credential folders; remove it to sandbox them again.',
    });
  } else
    rows.push({
      name: "sandbox",
      status: "ok",
      message:
        "Every app child (backend, hook, installer) runs confined: it sees its own folder, the system's programs and a private /tmp, nothing of any home.",
    });
  if (sessionTtlInForce(config.config).capped) {
    rows.push({
      name: "session lifetime",
      status: "warn",
      message: `auth.session_ttl in config.json is ${config.config.auth.session_ttl} s, above the 90-day limit: browser sign-ins last 90 days. Set it to 7776000 or less (\`${commandHint("config", "set", "auth.session_ttl", "30d")}\`).`,
    });
  }
  const preferred = config.config.sandbox.bounds;
  const bounds = boundsAvailability(parentEnvironment().PATH, preferred === "auto" ? undefined : preferred);
  const limits = describeLimits(childLimits(config.config));
  const binds = bounds.mechanism !== "none" && bounds.processLimitBinds;
  rows.push({
    name: "bounds",
    status: binds ? "ok" : "warn",
    message: `${bounds.mechanism}: ${bounds.description}; each app child may use ${limits}.${binds ? "" : " Run as a user with systemd (systemd-run --user) or give the gateway a delegated cgroup to bound processes too."}`,
  });
  return rows;
}

function anchorRow(home: string): DoctorRow {
  const lostAnchor = readUnacknowledgedAnchor(home);
  return lostAnchor === null
    ? {
        name: "security-log anchor",
        status: "ok",
        message: "The anchor outside the log has followed it since it was created.",
      }
    : {
        name: "security-log anchor",
        status: "fail",
        message: `The anchor was ${lostAnchor.reason} at ${lostAnchor.since}: rows cut off the log before then cannot be detected. Run \`${commandHint("security", "acknowledge")}\` once you know why.`,
      };
}

function setprivRow(): DoctorRow {
  return findSetpriv(parentEnvironment().PATH) !== null
    ? {
        name: "setpriv",
        status: "ok",
        message: "workerd is tied to the gateway process (PR_SET_PDEATHSIG) and dies with it.",
      }
    : {
        name: "setpriv",
        status: "warn",
        message: "setpriv is missing: workerd may outlive a killed gateway; install util-linux.",
      };
}

function authModeRow(settings: Settings): DoctorRow {
  const mode = authModeInForce({ AUTH_MODE_REQUESTED: settings.authModeRequested });
  return mode.warning
    ? { name: "auth mode", status: "warn", message: mode.warning }
    : {
        name: "auth mode",
        status: mode.mode === "none" ? "warn" : "ok",
        message:
          mode.mode === "none"
            ? "none: anyone on this machine can act as the owner; the gateway binds loopback only."
            : "local_token.",
      };
}

export async function runDoctor(settings: Settings, values: { json?: boolean }): Promise<number> {
  const rows = await doctorRows(settings);
  if (values.json) process.stdout.write(`${JSON.stringify({ rows })}\n`);
  else for (const row of rows) process.stdout.write(`${row.status.padEnd(4)}  ${row.name}: ${row.message}\n`);
  return rows.some((row) => row.status === "fail") ? 1 : 0;
}

/** App folders on disk that the gateway's registry has no record of: never silently stuck. */
async function unrecordedAppsRow(appsDir: string, home: string): Promise<DoctorRow> {
  const name = "app folders";
  const folders = exists(appsDir)
    ? readdirSync(appsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith("."))
        .map((e) => e.name)
    : [];
  let recorded: Set<string>;
  try {
    const answer = await callGateway(home, "doctor", "GET", "/api/apps");
    if (answer.status !== 200)
      return { name, status: "warn", message: `The gateway did not list its apps (${answer.status}).` };
    recorded = new Set((answer.body.apps as Array<{ name: string }>).map((app) => app.name));
  } catch (error) {
    return { name, status: "warn", message: error instanceof Error ? error.message : String(error) };
  }
  const strays = folders.filter((folder) => !recorded.has(folder));
  if (strays.length === 0) return { name, status: "ok", message: `Every folder in ${appsDir} is an installed app.` };
  return {
    name,
    status: "fail",
    message: `${strays.map((s) => join(appsDir, s)).join(", ")} ha${strays.length === 1 ? "s" : "ve"} no install record (the app registry lost it): move the folder out of apps/ and install it again from there with \`${commandHint("apps", "install", "<folder>")}\` (review it first: its bytes were not kept under consent), or delete it.`,
  };
}
