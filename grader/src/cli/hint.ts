/**
 * `pnpm hint exNN [--all]`: shows the next hint of an exercise (each call
 * one more, counted in `.grades/hints.json` and recorded in the rubric), or
 * every hint shown so far with `--all`.
 */
import { findExercise } from '../exercises.ts';
import { palette } from '../report.ts';
import { hintsShown, setHintsShown } from '../grade-records.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = 'usage: pnpm hint exNN [--all]';

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), [], ['all'], USAGE);
  if (positional.length !== 1) throw new UsageError(USAGE);
  const { manifest } = findExercise(positional[0]!);
  const c = palette(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
  const total = manifest.hints.length;
  const shown = hintsShown(manifest.id);
  if (options.all) {
    if (shown === 0) console.log(`No hints shown yet for ${manifest.id}. \`pnpm hint ${manifest.id}\` shows the first.`);
    manifest.hints.slice(0, shown).forEach((h, i) => console.log(`${c.bold(`Hint ${i + 1} of ${total}:`)} ${h}\n`));
    return 0;
  }
  const next = Math.min(shown + 1, total);
  console.log(`${c.bold(`${manifest.id} · hint ${next} of ${total}:`)} ${manifest.hints[next - 1]}`);
  if (next > shown) setHintsShown(manifest.id, next);
  console.log(c.dim(next < total ? `\n(\`pnpm hint ${manifest.id}\` again for the next one; hints shown are recorded in your rubric.)` : '\n(That was the last hint. `pnpm hint --all` lists them again.)'));
  return 0;
}

await runCli(main);
