// The CLI's command table: one row per command, kept by command family in commands-*.ts and
// assembled here in the order help and docs/cli.md list them. main.ts parses argv against it,
// --help and docs/cli.md are rendered from it; a command exists only once it has a row.
import { checkTable, type CommandSpec } from "./command-table";
import { APPS_COMMANDS } from "./commands-apps";
import { APPROVALS_COMMANDS } from "./commands-approvals";
import { completionCommand } from "./commands-completion";
import { DURABILITY_COMMANDS } from "./commands-durability";
import { EDGE_COMMANDS } from "./commands-edge";
import { GATEWAY_COMMANDS } from "./commands-gateway";
import { MCP_COMMANDS } from "./commands-mcp";
import { SECURITY_COMMANDS } from "./commands-security";
import { SETTINGS_COMMANDS } from "./commands-settings";

export const COMMANDS: readonly CommandSpec[] = checkTable([
  ...GATEWAY_COMMANDS,
  ...SECURITY_COMMANDS,
  ...APPS_COMMANDS,
  ...MCP_COMMANDS,
  ...APPROVALS_COMMANDS,
  ...SETTINGS_COMMANDS,
  ...DURABILITY_COMMANDS,
  ...EDGE_COMMANDS,
  completionCommand(() => COMMANDS),
]);
