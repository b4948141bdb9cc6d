import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', '../../scripts/vitest-count-reporter.ts'],
    testTimeout: 20_000,
    // Most of a runtime test is waiting (for rank workers to start, for a
    // timeout to pass), so two test files at a time halve the suite's time
    // even on two cores (vitest's default there is one).
    maxWorkers: 2,
  },
});
