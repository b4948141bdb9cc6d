/**
 * `pnpm playground [exNN] [--submission DIR] [--port N]`: starts the
 * playground and prints its address. With an exercise, the page runs its
 * public checks on the student's working tree on every save (the hidden
 * checks never reach the page; `pnpm grade exNN` is still what scores).
 */
import { parseArgs, runCli, UsageError } from '@dtlab/grader/grading';
import { startPlayground } from './server/server.ts';

const USAGE = 'usage: pnpm playground [exNN] [--submission DIR] [--port N]';

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ['submission', 'port'], ['help'], USAGE);
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  if (positional.length > 1) throw new UsageError(`one exercise at a time, got: ${positional.join(' ')}\n${USAGE}`);
  const port = options.port === undefined ? undefined : Number(options.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) throw new UsageError(`--port must be a port number, got ${String(options.port)}`);
  const pg = await startPlayground({ ...(positional[0] ? { exercise: positional[0] } : {}), ...(options.submission ? { submissionDir: String(options.submission) } : {}), ...(port !== undefined ? { port } : {}), quiet: true });
  const views = pg.exercise ? `#exercise (${pg.exercise.id}: ${pg.exercise.title}), #collectives, #pipeline, #trace` : '#collectives, #pipeline, #trace';
  console.log(`dtlab playground: ${pg.url}  (views: ${views})`);
  if (pg.exercise) console.log(`running ${pg.exercise.id}'s public checks in the page on every save of its src/; \`pnpm grade ${pg.exercise.id}\` scores (hidden checks included)`);
  console.log('Ctrl-C stops it.');
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  await pg.close();
  return 0;
}

await runCli(main);
