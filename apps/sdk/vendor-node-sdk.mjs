#!/usr/bin/env node
// Copies the Node SDK (apps/sdk/node, the one source of truth) into every app folder that
// vendors it. An installed app runs from its own folder with no registry, so it carries a
// copy; apps/fixtures/fixtures.test.ts fails when a copy differs from the source.
// Usage: node apps/sdk/vendor-node-sdk.mjs
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const SDK_DIR = join(here, "node");
export const VENDORED_COPIES = [
  join(here, "..", "fixtures", "node-notes", "vendor", "app-sdk"),
  join(here, "..", "fixtures", "mcp-notes", "vendor", "app-sdk"),
];

/** The files an app gets: package.json and what it lists in `files`. */
export function sdkFiles() {
  const pkg = JSON.parse(readFileSync(join(SDK_DIR, "package.json"), "utf8"));
  return ["package.json", ...pkg.files].sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const target of VENDORED_COPIES) {
    mkdirSync(target, { recursive: true });
    const wanted = new Set(sdkFiles());
    for (const name of readdirSync(target)) if (!wanted.has(name)) rmSync(join(target, name), { recursive: true });
    for (const name of wanted) copyFileSync(join(SDK_DIR, name), join(target, name));
    console.log(`vendored ${[...wanted].join(", ")} -> ${target}`);
  }
}
