import { defineConfig } from "vitest/config";

export default defineConfig({
  // Unit tests import the sources, which read the test build's flag: there it is the shipped value.
  define: { TEST_BUILD: "false" },
  test: {
    include: [
      "kernel/**/*.test.ts",
      "workers/**/*.test.ts",
      "durable/**/*.test.ts",
      "host-bridge/**/*.test.ts",
      "apps/**/*.test.ts",
      "test/**/*.test.ts",
      "scripts/**/*.test.ts",
      "bench/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", "dist/**"],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
