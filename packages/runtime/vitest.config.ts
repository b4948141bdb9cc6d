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
    // Inline ranks run in the test process itself: compiled as rank workers are (src/device/collect.ts),
    // so that their memory points come out the same in every run.
    execArgv: ['--no-concurrent-recompilation', '--no-concurrent-osr', '--no-flush-bytecode'],
  },
});
