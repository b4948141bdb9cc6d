/**
 * `pnpm explain exNN [--anyway]`: the explanation of why the exercise's
 * tempting idea fails. Shown once the exercise has passed; before that only
 * with `--anyway`, after a warning, because it gives the answer away.
 */
import { findExercise } from '../exercises.ts';
import { palette } from '../report.ts';
import { lastRubric } from '../grade-records.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = 'usage: pnpm explain exNN [--anyway]';

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), [], ['anyway'], USAGE);
  if (positional.length !== 1) throw new UsageError(USAGE);
  const { manifest } = findExercise(positional[0]!);
  const c = palette(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
  const last = lastRubric(manifest.id);
  const passed = last?.status === 'passed';
  if (!passed && !options.anyway) {
    const where = last ? `Your last grade was ${last.score}/${last.maxScore} (${last.status}).` : `${manifest.id} has not been graded yet.`;
    console.log(`${where} The explanation gives the answer away, so it is shown once \`pnpm grade ${manifest.id}\` passes.`);
    console.log(`To read it now anyway: pnpm explain ${manifest.id} --anyway`);
    return 1;
  }
  if (!passed) console.log(c.yellow(`warning: ${manifest.id} has not passed yet; this explains the answer.\n`));
  console.log(c.bold(`${manifest.id}: ${manifest.title}: why the tempting idea fails\n`));
  console.log(manifest.explanation);
  return 0;
}

await runCli(main);
