/**
 * A vitest reporter that records how many tests passed, failed and were
 * skipped in `.vitest-results/summary.json` of the package under test.
 * `pnpm test` adds these files up across the workspace (turbo restores them
 * from its cache along with the task's log), and prints one closing line.
 */
import { mkdirSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class CountReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: 0, skipped: 0, files: modules.length, unhandledErrors: unhandledErrors.length };
    for (const m of modules) {
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) counts.failed++; // a file that failed to load
      for (const t of m.children.allTests()) {
        const s = t.result().state;
        if (s === 'passed') counts.passed++;
        else if (s === 'failed') counts.failed++;
        else counts.skipped++;
      }
    }
    const dir = join(process.cwd(), '.vitest-results');
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `summary.json.${process.pid}.tmp`);
    writeFileSync(tmp, JSON.stringify(counts, null, 2) + '\n');
    renameSync(tmp, join(dir, 'summary.json'));
  }
}
