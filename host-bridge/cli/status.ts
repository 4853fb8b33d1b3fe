// `personalclaw status` and `personalclaw version`: whether the home's gateway runs and answers,
// and what this package is.
import { homePaths } from "../home";
import { readLiveGateway } from "./gateway-file";
import { callGateway } from "./gateway-client";
import { commandHint, homeInProse } from "./invocation";
import { packageVersion, workerdVersion } from "./package-facts";
import { printRefusal } from "./print";

/** Exit 0 when the gateway runs and answers; 1 when it does not run (said, not thrown: it is the answer asked for). */
export async function runStatus(home: string, values: { json?: boolean }): Promise<number> {
  const gateway = readLiveGateway(homePaths(home));
  if (!gateway) {
    if (values.json) process.stdout.write(`${JSON.stringify({ running: false, home })}\n`);
    else
      process.stdout.write(
        `The gateway of ${homeInProse(home)} is not running; start it with: ${commandHint("start")}\n`,
      );
    return 1;
  }
  const answer = await callGateway(home, "status", "GET", "/api/status");
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  const status = {
    running: true,
    home,
    pid: gateway.pid,
    url: gateway.url,
    started_at: gateway.startedAt,
    ...answer.body,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(status)}\n`);
  else
    process.stdout.write(
      `The gateway of ${homeInProse(home)} is running at ${gateway.url} (pid ${gateway.pid}, version ${status.version}, up ${status.uptime_s} s, auth ${status.auth_mode}); ${status.apps.installed ?? "?"} apps installed, ${status.apps.running ?? "?"} running. Sign in: ${commandHint("token")}\n`,
    );
  return 0;
}

export async function runVersion(values: { json?: boolean }): Promise<number> {
  const version = { version: packageVersion(), workerd: workerdVersion(), node: process.versions.node };
  process.stdout.write(
    values.json
      ? `${JSON.stringify(version)}\n`
      : `personalclaw ${version.version}${version.workerd ? ` (${version.workerd}, node ${version.node})` : ` (node ${version.node})`}\n`,
  );
  return 0;
}
