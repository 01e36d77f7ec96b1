// End-to-end tests: a real `qvl serve` with the tiny fixture model and Debian's
// Chromium driven by playwright-core. Run one file at a time: two cores only.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
