#!/usr/bin/env node
// The personalclaw command: builds the bundles if a source changed, then runs the CLI.
import { buildIfStale } from "../scripts/build.mjs";

await buildIfStale();
const { main } = await import("../dist/cli.mjs");
process.exitCode = await main(process.argv.slice(2));
