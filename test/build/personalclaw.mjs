#!/usr/bin/env node
// The personalclaw command of the test build (dist/test/cli.mjs): the product with its test
// seams compiled in. The end-to-end suites and the bench start gateways through it; an owner
// runs bin/personalclaw.mjs, whose bundles hold none of them.
import { buildIfStale } from "../../scripts/build.mjs";

await buildIfStale();
const { main } = await import("../../dist/test/cli.mjs");
process.exitCode = await main(process.argv.slice(2));
