import { dtrun } from '../src/cli/dtrun.ts';

process.exitCode = await dtrun(process.argv.slice(2));
