// `personalclaw doctor [--json]`: one row per thing this machine and home need, each
// ok/warn/fail with a sentence saying how to fix it. Exit 1 when a row fails.
import { parseArgs } from "node:util";
import { existsSync, statSync, accessSync, constants } from "node:fs";
import { execaSync } from "execa";
import { authModeInForce } from "../../workers/contracts/auth-mode";
import { homePaths } from "../home";
import { childLimits, readOwnerConfig } from "../owner-config";
import { sandboxAvailability } from "../sandbox/bubblewrap";
import { boundsAvailability, describeLimits } from "../sandbox/bounds";
import { parentEnvironment, type Settings } from "../settings";
import { isProcessAlive, readGatewayFile } from "./gateway-file";
import { workerdBinary } from "./start";

export interface DoctorRow {
  name: string;
  status: "ok" | "warn" | "fail";
  message: string;
}

function modeRow(name: string, path: string, expected: number, missing: DoctorRow): DoctorRow {
  if (!existsSync(path)) return missing;
  const mode = statSync(path).mode & 0o777;
  if ((mode & ~expected) === 0) return { name, status: "ok", message: `${path} is ${mode.toString(8)}.` };
  return { name, status: "fail", message: `${path} is ${mode.toString(8)}; run \`chmod ${expected.toString(8)} ${path}\`.` };
}

/** Every doctor row for these settings. */
export async function doctorRows(settings: Settings): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const [major, minor] = process.versions.node.split(".").map(Number);
  rows.push(
    major > 20 || (major === 20 && minor >= 19)
      ? { name: "node", status: "ok", message: `Node ${process.versions.node}.` }
      : { name: "node", status: "fail", message: `Node ${process.versions.node} is too old; install Node 20.19 or newer.` },
  );
  try {
    const binary = workerdBinary();
    accessSync(binary, constants.X_OK);
    const version = execaSync(binary, ["--version"], { reject: false }).stdout.trim();
    rows.push({ name: "workerd", status: "ok", message: `${version} at ${binary}.` });
  } catch {
    rows.push({ name: "workerd", status: "fail", message: "The workerd binary is missing; run `npm ci` in the PersonalClaw folder." });
  }
  // The same probe the supervisor asks before every start, so doctor cannot say ok while backends refuse.
  const sandbox = await sandboxAvailability(parentEnvironment().PATH);
  rows.push(
    sandbox.ok
      ? { name: "bubblewrap", status: "ok", message: `${sandbox.path} starts the confinement sandbox every app child runs in${sandbox.userNamespace ? " (own user namespace)" : ""}.` }
      : { name: "bubblewrap", status: "fail", message: `${sandbox.reason ?? "bwrap cannot run"}; install it with \`apt-get install bubblewrap\` (app children refuse to start without it).` },
  );
  const paths = homePaths(settings.home);
  rows.push(modeRow("home", paths.home, 0o700, { name: "home", status: "warn", message: `${paths.home} does not exist yet; \`personalclaw start\` creates it.` }));
  rows.push(modeRow("local secret", paths.localSecret, 0o600, { name: "local secret", status: "warn", message: `${paths.localSecret} does not exist yet; \`personalclaw start\` writes it.` }));
  const config = readOwnerConfig(paths.home);
  if (!config.ok) rows.push({ name: "config", status: "fail", message: `${config.reason}; fix or remove ${paths.home}/config.json.` });
  else if (config.config.sandbox.mode === "off") {
    rows.push({ name: "sandbox", status: "warn", message: 'sandbox.mode is "off" in config.json: app backends run without bubblewrap and can read your credential folders; remove it to sandbox them again.' });
  } else rows.push({ name: "sandbox", status: "ok", message: "Every app child (backend, hook, installer) runs confined: it sees its own folder, the system's programs and a private /tmp, nothing of any home." });
  if (config.ok) {
    const preferred = config.config.sandbox.bounds;
    const bounds = boundsAvailability(parentEnvironment().PATH, preferred === "auto" ? undefined : preferred);
    const limits = describeLimits(childLimits(config.config));
    const binds = bounds.mechanism !== "none" && bounds.processLimitBinds;
    rows.push({
      name: "bounds",
      status: binds ? "ok" : "warn",
      message: `${bounds.mechanism}: ${bounds.description}; each app child may use ${limits}.${binds ? "" : " Run as a user with systemd (systemd-run --user) or give the gateway a delegated cgroup to bound processes too."}`,
    });
  }
  const gateway = readGatewayFile(paths);
  rows.push(
    gateway && isProcessAlive(gateway.pid)
      ? { name: "gateway", status: "ok", message: `Running (pid ${gateway.pid}) at http://127.0.0.1:${gateway.port}/.` }
      : { name: "gateway", status: "warn", message: "Not running; start it with `personalclaw start`." },
  );
  if (settings.testHooks) {
    rows.push({ name: "test hooks", status: "fail", message: "PERSONALCLAW_TEST_HOOKS=1 lets any caller move the gateway's clock (and so outlive expiries); it is for the test suite only — unset it." });
  }
  const mode = authModeInForce({ AUTH_MODE_REQUESTED: settings.authModeRequested });
  rows.push(
    mode.warning
      ? { name: "auth mode", status: "warn", message: mode.warning }
      : { name: "auth mode", status: mode.mode === "none" ? "warn" : "ok", message: mode.mode === "none" ? "none: anyone on this machine can act as the owner; the gateway binds loopback only." : "local_token." },
  );
  return rows;
}

export async function runDoctor(args: string[], settings: Settings): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: "boolean" } } });
  const rows = await doctorRows(settings);
  if (values.json) process.stdout.write(`${JSON.stringify({ rows })}\n`);
  else for (const row of rows) process.stdout.write(`${row.status.padEnd(4)}  ${row.name}: ${row.message}\n`);
  return rows.some((row) => row.status === "fail") ? 1 : 0;
}
