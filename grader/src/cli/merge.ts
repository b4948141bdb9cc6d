/**
 * `pnpm grade:merge <out1> <out2> ... --out <dir> [--partial]`
 *
 * Joins the output folders of sharded `grade:batch` runs into one: every
 * rubric, one gradebook.csv and one summary.json. Refuses overlapping or
 * inconsistent shards with a message naming them (exit 2).
 */
import { mergeShards, MergeError } from '../batch/merge.ts';
import { RecordError } from '../batch/record.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = 'usage: pnpm grade:merge <shard-out-dir> <shard-out-dir> ... --out <dir> [--partial]';

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ['out'], ['partial', 'help'], USAGE);
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  if (positional.length === 0) throw new UsageError(`give the shards' output folders\n${USAGE}`);
  if (typeof options.out !== 'string') throw new UsageError(`--out <dir> is required: where the merged gradebook goes\n${USAGE}`);
  try {
    const g = mergeShards(positional, options.out, { partial: Boolean(options.partial) });
    const s = g.summary;
    console.log(`merged ${positional.length} folder${positional.length === 1 ? '' : 's'} (${s.shard}) into ${options.out}: ${s.students} students, ${s.pairs.graded}/${s.pairs.expected} pairs graded`);
    console.log(`  ${s.status.passed} passed, ${s.status.failed} failed, ${s.status.error} grading errors, ${s.status.missing} missing · grader ${s.graderVersions.join(', ') || '-'}`);
    console.log(`gradebook: ${options.out}/gradebook.csv · summary: ${options.out}/summary.json`);
    return 0;
  } catch (e) {
    if (e instanceof MergeError || e instanceof RecordError) {
      console.error(e.message);
      return 2;
    }
    throw e;
  }
}

await runCli(main);
