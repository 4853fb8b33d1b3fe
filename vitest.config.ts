import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// The test tiers, one vitest project each (README.md, "Tests", says which to run when). Where a
// file lives decides its tier unless a list below names it: a test beside the source it tests
// (kernel/, workers/, durable/, host-bridge/, scripts/, apps/, bench/) is a unit test, and a
// suite under test/ starts gateways (e2e). scripts/check-test-tiers.mjs, run by `npm test`,
// fails when a test file is in no project or in two, and when a list names a file that is gone.

/** Unit tests run in-process: test/helpers/unit-starts-no-process.ts fails one that starts a child. */
const UNIT_FOLDERS = ["kernel", "workers", "durable", "host-bridge", "scripts", "apps", "bench"];

/** Unit tests under test/: they read files and start nothing. */
const UNIT_UNDER_TEST = ["test/dashboard-text-only.test.ts"];

/** Real child processes (bubblewrap, python3, installers, SDK backends, esbuild, mounts), no gateway. */
const INTEGRATION = [
  "apps/fixtures/fixtures.test.ts",
  "apps/sdk/python/python-sdk.test.ts",
  "apps/sdk/sdk-packages.test.ts",
  "apps/sdk/signed-backends.test.ts",
  "host-bridge/egress/own-addresses.test.ts",
  "host-bridge/egress/secret-origin.test.ts",
  "host-bridge/gateway-log.test.ts",
  "host-bridge/install/copy-app-data.test.ts",
  "host-bridge/install/install-app.test.ts",
  "host-bridge/install/install-dependencies.test.ts",
  "host-bridge/mcp/running-servers.test.ts",
  "host-bridge/sandbox/bubblewrap.test.ts",
  "host-bridge/sandbox/child-identity.test.ts",
  "host-bridge/sandbox/granted-folders.test.ts",
  "host-bridge/sources/mcpb-signature.test.ts",
  "host-bridge/staging/stage-bundle.test.ts",
  "host-bridge/supervisor/backend-supervisor.test.ts",
  "host-bridge/supervisor/process-identity.test.ts",
  "host-bridge/supervisor/reap-orphans.test.ts",
  "host-bridge/supervisor/successor.test.ts",
  "scripts/build-service.test.ts",
  "scripts/check-runtime-imports.test.ts",
  "scripts/shipped-bundles.test.ts",
  "scripts/wrangler-config.test.ts",
];

/**
 * Durable Object code on the real runtime: workerd through @cloudflare/vitest-pool-workers, over a
 * Durable Object's own SQLite storage (test/helpers/durable-store.ts), with the bindings and
 * compatibility date of wrangler.jsonc.
 */
const DURABLE = [
  "durable/schema-steps.test.ts",
  "durable/bridge-link/pairing-codes.test.ts",
  "durable/security-log/security-log-core.test.ts",
  "durable/security-log/verifiable-log.test.ts",
];

/** Suites that drive the dashboard in Chromium through playwright-core (each also starts a gateway). */
const BROWSER = [
  "test/app-ui-sandbox.test.ts",
  "test/approvals.test.ts",
  "test/browser-edge.test.ts",
  "test/dashboard-folders.test.ts",
  "test/dashboard-mcp-tools.test.ts",
  "test/dashboard-pages.test.ts",
  "test/dashboard-sources.test.ts",
  "test/dashboard.test.ts",
  "test/edge-dashboard.test.ts",
  "test/events.test.ts",
  "test/newcomer.test.ts",
  "test/review-grants.test.ts",
  "test/settings-secrets.test.ts",
];

/** Loops that kill the gateway or workerd (kill -9) at every step of an operation: the longest suites. */
const FAULTS = [
  "test/lifecycle-killed-at-every-step.test.ts",
  "test/transition-half-dies.test.ts",
  "test/backup-restore-killed.test.ts",
  "test/update-gate-killed.test.ts",
];

export default defineConfig({
  // Unit tests import the sources, which read the test build's flag: there it is the shipped value.
  define: { TEST_BUILD: "false" },
  test: {
    exclude: ["**/node_modules/**", "dist/**"],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: "forks",
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // In-process tests share their worker's process (no fork and fresh imports per file):
          // 55 s -> 18 s here. Each file still runs the setup file, so its guard still holds.
          isolate: false,
          include: [...UNIT_FOLDERS.map((folder) => `${folder}/**/*.test.ts`), ...UNIT_UNDER_TEST],
          exclude: [...INTEGRATION, ...DURABLE],
          setupFiles: ["test/helpers/unit-starts-no-process.ts"],
        },
      },
      { extends: true, test: { name: "integration", include: INTEGRATION } },
      {
        extends: true,
        test: { name: "e2e", include: ["test/**/*.test.ts"], exclude: [...UNIT_UNDER_TEST, ...BROWSER, ...FAULTS] },
      },
      { extends: true, test: { name: "browser", include: BROWSER } },
      { extends: true, test: { name: "faults", include: FAULTS } },
      {
        define: { TEST_BUILD: "false" },
        plugins: [
          cloudflareTest({
            main: "test/helpers/durable-pool-worker.ts",
            wrangler: { configPath: "wrangler.jsonc" },
            miniflare: {
              durableObjects: { SCRATCH: { className: "SqlScratch", useSQLite: true } },
              // The secrets wrangler.jsonc requires, as a deploy sets them (test values).
              bindings: { INTERNAL_SECRET: "1".repeat(64), SEL_KEY: "0f".repeat(32), PERSONALCLAW_PAIRING_SECRET: "" },
            },
          }),
        ],
        test: { name: "durable", include: DURABLE, testTimeout: 60_000, hookTimeout: 90_000 },
      },
    ],
  },
});
