/**
 * GitHub Classroom: the workflow that grades each push of a student's
 * repository (the student export, `.github/workflows/classroom.yml`) with
 * GitHub's autograding actions.
 *
 * One step per exercise runs `pnpm grade exNN --no-hidden` through
 * classroom-resources/autograding-command-grader, which awards the step's
 * `max-score` when the command exits 0 and nothing otherwise: the exercise's
 * public checks, worth their points in the manifest. (Partial credit needs a
 * step per check; a student sees every check in the step's log.) The
 * command passes `--no-hidden` so that it grades the same checks in the
 * author's repository as in the export, which has no hidden checks. The
 * grading reporter, classroom-resources/autograding-grading-reporter, adds
 * the steps up for Classroom: each step's result reaches it in the variable
 * `<STEP ID>_RESULTS`, and its `runners` input lists the step ids.
 *
 * What the reporter's documentation requires of a workflow: it is named
 * `Autograding Tests` and has one job, `run-autograding-tests`. The command
 * grader passes the command only PATH and HOME, so pnpm is installed on the
 * PATH (pnpm/action-setup, the version from package.json's packageManager)
 * before the dependencies, once, in a step of their own.
 */
import { parse, stringify } from 'yaml';
import type { Exercise } from '../exercises.ts';
import { maxPoints } from '../manifest.ts';
import { UserError } from '../user-error.ts';

/** Where the workflow goes in a repository. */
export const CLASSROOM_WORKFLOW_PATH = '.github/workflows/classroom.yml';

/** The actions the workflow uses, pinned to their major versions. */
export const CLASSROOM_ACTIONS = Object.freeze({
  checkout: 'actions/checkout@v4',
  pnpm: 'pnpm/action-setup@v4',
  node: 'actions/setup-node@v4',
  grader: 'classroom-resources/autograding-command-grader@v1',
  reporter: 'classroom-resources/autograding-grading-reporter@v1',
});

/** An exercise the workflow cannot grade as it is (the command grader takes whole points only). */
export class ClassroomError extends UserError {
  override name = 'ClassroomError';
}

/** The command a step runs for `exercise`. */
export function gradeCommand(exercise: Exercise): string {
  return `pnpm grade ${exercise.manifest.id} --no-hidden`;
}

/**
 * Minutes a step may run: the exercise's own limit, plus five for what only
 * the first grading of a run does (it compiles the course once).
 */
export function stepTimeoutMinutes(exercise: Exercise): number {
  return Math.ceil(exercise.manifest.timeLimits.totalMs / 60_000) + 5;
}

/** The workflow's YAML text for `exercises` (every exercise of the course, in order). */
export function classroomWorkflow(exercises: readonly Exercise[]): string {
  const steps = exercises.map((e) => {
    const points = maxPoints(e.manifest, 'public');
    // The action reads max-score with parseInt: 2.5 would silently become 2.
    if (!Number.isInteger(points)) throw new ClassroomError(`${e.folder}: its public checks are worth ${points} points, and GitHub Classroom's command grader counts whole points only: make the public points add up to a whole number`);
    return {
      name: `${e.manifest.id} ${e.manifest.title}`,
      id: e.manifest.id,
      uses: CLASSROOM_ACTIONS.grader,
      with: {
        'test-name': `${e.manifest.id} ${e.manifest.title} (public checks)`,
        'setup-command': '',
        command: gradeCommand(e),
        timeout: stepTimeoutMinutes(e),
        'max-score': points,
      },
    };
  });
  const workflow = {
    name: 'Autograding Tests',
    on: ['push', 'repository_dispatch'],
    permissions: { checks: 'write', actions: 'read', contents: 'read' },
    jobs: {
      'run-autograding-tests': {
        'runs-on': 'ubuntu-latest',
        // Classroom's own commits to the repository are not a student's work.
        if: "github.actor != 'github-classroom[bot]'",
        steps: [
          { name: 'Checkout code', uses: CLASSROOM_ACTIONS.checkout },
          { name: 'Install pnpm', uses: CLASSROOM_ACTIONS.pnpm },
          { name: 'Install Node.js', uses: CLASSROOM_ACTIONS.node, with: { 'node-version': 20, cache: 'pnpm' } },
          { name: 'Install dependencies', run: 'pnpm install --frozen-lockfile' },
          ...steps,
          {
            name: 'Autograding Reporter',
            uses: CLASSROOM_ACTIONS.reporter,
            env: Object.fromEntries(steps.map((s) => [`${s.id.toUpperCase()}_RESULTS`, `\${{steps.${s.id}.outputs.result}}`])),
            with: { runners: steps.map((s) => s.id).join(',') },
          },
        ],
      },
    },
  };
  const text = stringify(workflow, { lineWidth: 0 });
  // What is written must read back as the workflow it was made from (quoting of names with colons, expressions).
  if (JSON.stringify(parse(text)) !== JSON.stringify(workflow)) throw new Error('BUG: the classroom workflow does not read back as it was made');
  const header = '# Grades each push with GitHub Classroom: one step per exercise (its public checks, worth their points).\n# Made by `pnpm kit export --student` from the exercise manifests; edit those, not this file.\n';
  return header + text;
}
