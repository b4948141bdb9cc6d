/**
 * `pnpm explain exNN [--answer N] [--anyway]`: the explanation of why the
 * exercise's tempting idea fails. Shown once the exercise has passed; before
 * that only with `--anyway`, after a warning, because it gives the answer
 * away.
 *
 * First it asks the student to name the failure mechanism, among the choices
 * the exercise's author wrote (its manifest's `mechanism`): the lab's loop
 * ends with "you can name the failure mechanism before opening the
 * explanation". It says whether the student named it, records the answer in
 * `.grades/mechanisms.json`, then explains. `--answer N` answers without a
 * prompt (choices count from 1); without a terminal and without it, the
 * question is printed with its choices and nothing else.
 */
import { findExercise } from '../exercises.ts';
import { palette } from '../report.ts';
import { lastRubric, recordMechanism } from '../grade-records.ts';
import { askMechanism, shownOrder } from '../mechanism.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = 'usage: pnpm explain exNN [--answer N] [--anyway]';

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ['answer'], ['anyway'], USAGE);
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
  const m = manifest.mechanism;
  if (m) {
    const order = shownOrder(manifest.id, m);
    const chosen = await askMechanism(m, order, options.answer as string | undefined);
    if (chosen === null) {
      console.log(`Before the explanation: ${m.question}\n${order.map((c, i) => `  ${i + 1}. ${m.choices[c]}`).join('\n')}`);
      console.log(`\nAnswer with: pnpm explain ${manifest.id} --answer N`);
      return 2;
    }
    const right = chosen === m.answer;
    recordMechanism(manifest.id, { answer: chosen, named: right });
    console.log(right ? c.green('\nYou named it.') : c.red(`\nNot quite: the mechanism is ${order.indexOf(m.answer) + 1}. ${m.choices[m.answer]}`));
    console.log('');
  }
  console.log(c.bold(`${manifest.id}: ${manifest.title}: why the tempting idea fails\n`));
  console.log(manifest.explanation);
  return 0;
}

await runCli(main);
