/**
 * The vite plugin behind `pnpm playground exNN`: tells the page which
 * exercise it serves (`/__dtlab/exercise`), lets the page's check worker
 * load the exercise's public checks and the student's working tree, and
 * tells the page when a file of that tree changes, so that it runs the
 * checks again.
 *
 * What reaches the page: the public checks' folder (grader/checks/exNN-...),
 * the student's src/, the course packages, and a manifest cut to what the
 * checks read (no hidden checks, no hints, no explanation). The hidden
 * checks and the solutions are refused by the server itself (server.ts:
 * `fs.deny`), whatever the page asks for.
 */
import { join } from 'node:path';
import type { Plugin } from 'vite';
import type { Exercise } from '@dtlab/grader/grading';

/** What the page learns about the exercise. */
export interface ExerciseInfo {
  id: string;
  folder: string;
  title: string;
  checks: { id: string; title: string; points: number }[];
  /** The manifest as the checks see it: limits, entry files, world sizes, the public checks. */
  manifest: Record<string, unknown>;
  /** URLs (vite's /@fs/ paths) of the public check module and of the submission's folder (ending in '/'). */
  checksModule: string;
  submissionBase: string;
  timeLimitMs: number;
}

/** The public side of `exercise`, served from `submissionDir` (the folder holding its src/). */
export function exerciseInfo(exercise: Exercise, submissionDir: string, checksDir: string): ExerciseInfo {
  const m = exercise.manifest;
  const publicChecks = m.checks.filter((c) => c.visibility === 'public');
  return {
    id: m.id,
    folder: exercise.folder,
    title: m.title,
    checks: publicChecks.map((c) => ({ id: c.id, title: c.title, points: c.points })),
    manifest: { id: m.id, slug: m.slug, title: m.title, entry: m.entry, worldSizes: m.worldSizes, timeLimits: m.timeLimits, memoryLimitMb: m.memoryLimitMb, checks: publicChecks, totalPoints: publicChecks.reduce((a, c) => a + c.points, 0) },
    checksModule: `/@fs${join(checksDir, exercise.folder, 'checks.ts')}`,
    submissionBase: `/@fs${submissionDir}/`,
    timeLimitMs: m.timeLimits.totalMs,
  };
}

/** The plugin (see the file comment); `exerciseDir` is where bare imports of the submission resolve from. */
export function exercisePlugin(info: ExerciseInfo | null, submissionDir: string | null, exerciseDir: string | null): Plugin {
  return {
    name: 'dtlab-exercise',
    configureServer(server) {
      server.middlewares.use('/__dtlab/exercise', (_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.setHeader('cache-control', 'no-store');
        res.end(JSON.stringify(info));
      });
      if (submissionDir) server.watcher.add(join(submissionDir, 'src'));
    },
    // A change in the student's tree (or the public checks) is the page's to act on: no reload, an event.
    handleHotUpdate(ctx) {
      if (!info || !submissionDir) return;
      if (ctx.file.startsWith(join(submissionDir, 'src') + '/') || ctx.file.includes(`/grader/checks/${info.folder}/`)) {
        ctx.server.ws.send({ type: 'custom', event: 'dtlab:changed', data: { file: ctx.file.slice(ctx.file.lastIndexOf('/') + 1) } });
        return [];
      }
    },
    // A submission folder outside the workspace (a copy) imports the course packages as the exercise folder does.
    async resolveId(source, importer) {
      if (!submissionDir || !exerciseDir || !importer || !importer.startsWith(submissionDir + '/') || source.startsWith('.') || source.startsWith('/')) return null;
      if (importer.startsWith(exerciseDir + '/')) return null;
      return this.resolve(source, join(exerciseDir, 'src', 'index.ts'), { skipSelf: true });
    },
  };
}
