import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "workers/**/*.test.ts",
      "durable/**/*.test.ts",
      "host-bridge/**/*.test.ts",
      "apps/**/*.test.ts",
      "test/**/*.test.ts",
      "scripts/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", "dist/**"],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
