// Renders docs/cli.md from the CLI's command table (npm run docs:cli); a test compares the
// committed file with a fresh render byte for byte.
import { COMMANDS } from "../host-bridge/cli/commands";
import { cliReference } from "../host-bridge/cli/help-text";

process.stdout.write(cliReference(COMMANDS));
