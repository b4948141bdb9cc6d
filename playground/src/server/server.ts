/**
 * Starts the playground: a vite dev server rooted at src/app, which serves
 * the page, compiles the kit's TypeScript packages for it on the fly (their
 * `browser` export conditions pick the builds without Node), and, with an
 * exercise, serves its public checks and the student's working tree.
 * Everything is local: the page loads nothing from the network.
 */
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type ViteDevServer } from 'vite';
import { findExercise, PUBLIC_CHECKS_DIR, ROOT } from '@dtlab/grader/grading';
import { exerciseInfo, exercisePlugin, type ExerciseInfo } from './exercise-plugin.ts';

const APP_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'app');

/** How to start the playground. */
export interface PlaygroundOptions {
  /** An exercise to serve (`ex01`, `1`, `ex01-allreduce-mean`). */
  exercise?: string;
  /** The folder holding the exercise's src/ (default: the exercise's own folder, the student's working tree). */
  submissionDir?: string;
  port?: number;
  host?: string;
  /** Print vite's own log lines. */
  quiet?: boolean;
}

/** A running playground. */
export interface Playground {
  url: string;
  exercise: ExerciseInfo | null;
  close(): Promise<void>;
  server: ViteDevServer;
}

/** Starts the playground server (see the file comment). */
export async function startPlayground(opts: PlaygroundOptions = {}): Promise<Playground> {
  const exercise = opts.exercise ? findExercise(opts.exercise) : null;
  const submissionDir = exercise ? realpathSync(opts.submissionDir ?? exercise.dir) : null;
  const exerciseDir = exercise ? realpathSync(exercise.dir) : null;
  const checksDir = realpathSync(PUBLIC_CHECKS_DIR);
  const root = realpathSync(ROOT);
  const info = exercise && submissionDir ? exerciseInfo(exercise, submissionDir, checksDir) : null;
  const server = await createServer({
    configFile: false,
    root: APP_DIR,
    logLevel: opts.quiet ? 'silent' : 'info',
    clearScreen: false,
    plugins: [exercisePlugin(info, submissionDir, exerciseDir)],
    // Workspace packages are TypeScript sources, compiled as they are asked for: nothing to pre-bundle.
    optimizeDeps: { noDiscovery: true, include: [] },
    server: {
      port: opts.port ?? 5179,
      host: opts.host ?? '127.0.0.1',
      strictPort: opts.port !== undefined && opts.port !== 0,
      fs: {
        strict: true,
        // What the page may load: the app, the course packages, the check API, the public checks, the submission.
        allow: [APP_DIR, join(root, 'packages'), join(root, 'grader', 'src'), checksDir, join(root, 'node_modules'), ...(submissionDir ? [submissionDir] : []), ...(exerciseDir ? [exerciseDir] : [])],
        // Never, even inside an allowed folder (a submission that copied them, say).
        deny: ['.env', '.env.*', '*.{crt,pem}', '**/.git/**', '**/grader/hidden/**', '**/solutions/**', '**/.grading/**', '**/.grades/**'],
      },
    },
  });
  await server.listen();
  const address = server.httpServer!.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return { url: `http://${opts.host ?? '127.0.0.1'}:${port}/`, exercise: info, server, close: () => server.close() };
}
