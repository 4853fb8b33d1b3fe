// `personalclaw apps outdated [<name>] [--json]`: asks each installed app's package source, through
// the gateway (GET /api/sources/outdated, resolved by the bridge), whether it offers a newer
// version, and prints the `apps update` command for each that does. It never installs: the update
// goes through the review and consent like every update.
import { safeLine } from "../../kernel/text/text-safety";
import type { SourceCheck } from "../../kernel/contracts/package-sources";
import { callGateway } from "./gateway-client";
import { commandHint } from "./invocation";
import { printRefusal, safeRow } from "./print";

/** The state word of one check: what the owner reads in the listing's last column. */
function stateOf(check: SourceCheck): string {
  if (check.error) return `not checked: ${check.error.message} (${check.error.code})`;
  if (check.outdated) return `update available: ${commandHint("apps", "update", check.app, check.update!)}`;
  if (check.latest === null) return "its source names no newer version";
  return "up to date";
}

export async function runAppsOutdated(
  home: string,
  name: string | undefined,
  values: { json?: boolean },
): Promise<number> {
  const path = `/api/sources/outdated${name === undefined ? "" : `?app=${encodeURIComponent(name)}`}`;
  const answer = await callGateway(home, "apps-outdated", "GET", path);
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  const checks = (answer.body.apps ?? []) as SourceCheck[];
  if (checks.length === 0) process.stdout.write("No installed app comes from a package source.\n");
  for (const check of checks)
    process.stdout.write(
      safeRow([
        check.app,
        `${check.kind}:${check.package}`,
        check.installed,
        check.latest ?? "-",
        safeLine(stateOf(check)),
      ]),
    );
  return 0;
}
