/**
 * `pnpm grade:batch <dir> --out <dir> [--exercises ex01,ex03] [--jobs N]
 *   [--shard i/n | --shard-count N] [--force] [--timeout s] [--memory MB]
 *   [--seed N] [--gradescope] [--junit] [--html] [--no-typecheck] [--no-knowledge-checks] [--plain]`
 *
 * Grades a class: one folder or .zip per student in <dir>. Writes
 * out/<student>/<exNN>.json, out/gradebook.csv and out/summary.json (and,
 * with --junit, out/junit.xml: every rubric as a JUnit report). A rerun
 * skips what is graded; Ctrl-C stops cleanly. --html also writes
 * out/<student>/<exNN>.html, the report as a page (html-report.ts), beside
 * every rubric. Exits 0 when every pair is
 * graded (whatever the scores), 2 on a usage error, 130/143 when stopped.
 */
import { join, relative } from 'node:path';
import { findExercise } from '../exercises.ts';
import { DiscoverError } from '../batch/discover.ts';
import { createProgress } from '../batch/progress.ts';
import { RecordError } from '../batch/record.ts';
import { runBatch } from '../batch/run.ts';
import { listRubrics } from '../batch/layout.ts';
import { writeAtomic } from '../atomic.ts';
import { htmlReport } from '../html-report.ts';
import { printable } from '../report.ts';
import { resolveShard, ShardError } from '../batch/shard.ts';
import { batchJunitXml, writeJunit } from '../export/junit.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = `usage: pnpm grade:batch <submissions-dir> --out <dir> [--exercises ex01,ex03] [--jobs N] [--shard i/n | --shard-count N]
                        [--force] [--timeout s] [--memory MB] [--seed N] [--gradescope] [--junit] [--html] [--no-typecheck] [--no-knowledge-checks] [--plain]`;

const SIGNAL_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

function positive(name: string, v: string | true | undefined, integer = true): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v === true || !(n > 0) || (integer && !Number.isInteger(n))) throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${String(v)}\n${USAGE}`);
  return n;
}

async function main(): Promise<number> {
  const { positional, options } = parseArgs(
    process.argv.slice(2),
    ['out', 'exercises', 'jobs', 'shard', 'shard-count', 'timeout', 'memory', 'seed'],
    ['force', 'gradescope', 'junit', 'html', 'no-typecheck', 'no-knowledge-checks', 'plain', 'help'],
    USAGE,
  );
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  if (positional.length !== 1) throw new UsageError(`give one submissions folder${positional.length ? `, got: ${positional.join(' ')}` : ''}\n${USAGE}`);
  if (typeof options.out !== 'string') throw new UsageError(`--out <dir> is required: where the rubrics and the gradebook go\n${USAGE}`);
  const exercises = typeof options.exercises === 'string' ? [...new Map(options.exercises.split(',').filter(Boolean).map((n) => findExercise(n)).map((e) => [e.folder, e])).values()] : undefined; // runBatch's default: every exercise
  const seed = options.seed === undefined ? undefined : Number(options.seed);
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0)) throw new UsageError(`--seed must be a non-negative integer, got ${String(options.seed)}`);
  const timeout = positive('timeout', options.timeout, false);
  const memory = positive('memory', options.memory);

  const controller = new AbortController();
  let stoppedBy: string | null = null;
  const view = createProgress({ plain: Boolean(options.plain) });
  const onSignal = (sig: NodeJS.Signals) => {
    if (stoppedBy) process.exit(SIGNAL_CODES[sig] ?? 1); // a second Ctrl-C: leave now; the gradings are already being killed
    stoppedBy = sig;
    view.onEvent({ type: 'stopping', reason: `${sig}: killing the running gradings; finished rubrics are kept (${sig === 'SIGINT' ? 'Ctrl-C again' : 'the signal again'} to quit at once)` });
    controller.abort();
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onSignal);

  let result;
  try {
    result = await runBatch({
      submissions: positional[0]!,
      out: options.out,
      exercises,
      jobs: positive('jobs', options.jobs), // runBatch's default: the number of cores
      shard: resolveShard(options.shard as string | undefined, options['shard-count'] as string | undefined),
      force: Boolean(options.force),
      ...(timeout !== undefined ? { timeoutMs: Math.round(timeout * 1000) } : {}),
      ...(memory !== undefined ? { memoryMb: memory } : {}),
      ...(seed !== undefined ? { seed } : {}),
      gradescope: Boolean(options.gradescope),
      typeCheck: !options['no-typecheck'],
      knowledgeChecks: !options['no-knowledge-checks'],
      signal: controller.signal,
      onEvent: (e) => view.onEvent(e),
    });
  } catch (e) {
    if (e instanceof DiscoverError || e instanceof ShardError || e instanceof RecordError) {
      view.stop();
      console.error(e.message);
      return 2;
    }
    throw e;
  } finally {
    view.stop();
  }
  // --html: a page beside every rubric of the folder (this run's and those kept from earlier runs).
  if (options.html) for (const f of listRubrics(result.outDir)) if (f.rubric) writeAtomic(f.file.replace(/\.json$/, '.html'), htmlReport(f.rubric));
  const rel = relative(process.cwd(), result.outDir);
  const out = rel && !rel.startsWith('..') ? rel : result.outDir;
  const s = result.gradebook.summary;
  const done = s.pairs.graded;
  console.log(
    `\n${result.graded} graded this run (${result.counts.passed} passed, ${result.counts.failed} failed, ${result.counts.error} grading errors), ${result.skipped} already graded and skipped.`,
  );
  console.log(`gradebook: ${out}/gradebook.csv (${s.students} students, ${done}/${s.pairs.expected} pairs graded) · summary: ${out}/summary.json · rubrics: ${out}/<student>/<exNN>.json`);
  if (options.junit) {
    // From the rubric files, like the gradebook: what finished, even when the batch was stopped.
    writeJunit(join(result.outDir, 'junit.xml'), batchJunitXml(result.outDir).xml);
    console.log(`JUnit report: ${out}/junit.xml`);
  }
  if (s.problems.length) console.log(`problems (see summary.json):\n${s.problems.map((p) => `  ${printable(p)}`).join('\n')}`);
  if (result.interrupted) {
    console.error(
      `\nstopped by ${stoppedBy ?? 'an abort'}: ${done} of ${s.pairs.expected} pairs are graded and in the gradebook; ${result.remaining} left. Rerun the same command to grade the rest (graded pairs are skipped).`,
    );
    return SIGNAL_CODES[stoppedBy ?? ''] ?? 1;
  }
  return 0;
}

await runCli(main);
