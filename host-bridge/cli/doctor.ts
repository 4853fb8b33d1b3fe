// `personalclaw doctor [--json]`: one row per thing this machine and home need, each
// ok/warn/fail with a sentence saying how to fix it. Exit 1 when a row fails.
import { parseArgs } from "node:util";
import { existsSync, statSync, accessSync, constants } from "node:fs";
import { execaSync } from "execa";
import { authModeInForce } from "../../workers/contracts/auth-mode";
import { homePaths } from "../home";
import { readOwnerConfig } from "../owner-config";
import type { Settings } from "../settings";
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
export function doctorRows(settings: Settings): DoctorRow[] {
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
  const bwrap = execaSync("bwrap", ["--ro-bind", "/", "/", "true"], { reject: false });
  rows.push(
    bwrap.exitCode === 0
      ? { name: "bubblewrap", status: "ok", message: "bwrap runs; app backends will be sandboxed." }
      : { name: "bubblewrap", status: "fail", message: "bwrap is missing or cannot run; install it with `apt-get install bubblewrap` (app backends refuse to start without it)." },
  );
  const paths = homePaths(settings.home);
  rows.push(modeRow("home", paths.home, 0o700, { name: "home", status: "warn", message: `${paths.home} does not exist yet; \`personalclaw start\` creates it.` }));
  rows.push(modeRow("local secret", paths.localSecret, 0o600, { name: "local secret", status: "warn", message: `${paths.localSecret} does not exist yet; \`personalclaw start\` writes it.` }));
  const config = readOwnerConfig(paths.home);
  if (!config.ok) rows.push({ name: "config", status: "fail", message: `${config.reason}; fix or remove ${paths.home}/config.json.` });
  else if (config.config.sandbox.mode === "off") {
    rows.push({ name: "sandbox", status: "warn", message: 'sandbox.mode is "off" in config.json: app backends run without bubblewrap and can read your credential folders; remove it to sandbox them again.' });
  } else rows.push({ name: "sandbox", status: "ok", message: "App backends run in bubblewrap at the strict level." });
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
  const rows = doctorRows(settings);
  if (values.json) process.stdout.write(`${JSON.stringify({ rows })}\n`);
  else for (const row of rows) process.stdout.write(`${row.status.padEnd(4)}  ${row.name}: ${row.message}\n`);
  return rows.some((row) => row.status === "fail") ? 1 : 0;
}
