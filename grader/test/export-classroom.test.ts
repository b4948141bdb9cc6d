/**
 * The GitHub Classroom workflow: valid YAML, in the shape the grading
 * reporter's documentation requires (the workflow named `Autograding Tests`,
 * one job `run-autograding-tests`), every action given only the inputs its
 * action.yml declares and every required one, one command-grader step per
 * exercise worth the exercise's public points, and the reporter reading each
 * step's result from `<STEP ID>_RESULTS` with its id in `runners`. That each
 * step's command passes on the reference solution and fails on the starter is
 * kit/test/export-classroom.test.ts, in a student export.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classroomWorkflow, ClassroomError, CLASSROOM_ACTIONS } from '../src/export/classroom.ts';
import { listExercises } from '../src/exercises.ts';
import { ROOT } from '../src/paths.ts';

/**
 * The inputs each action declares (its action.yml, at the major version
 * used), and which are required: classroom-resources/autograding-command-grader
 * v1, classroom-resources/autograding-grading-reporter v1, actions/checkout v4,
 * pnpm/action-setup v4, actions/setup-node v4 (the inputs used here).
 */
const DOCUMENTED: Record<string, { inputs: string[]; required: string[] }> = {
  [CLASSROOM_ACTIONS.grader]: { inputs: ['test-name', 'setup-command', 'command', 'timeout', 'max-score'], required: ['test-name', 'command'] },
  [CLASSROOM_ACTIONS.reporter]: { inputs: ['runners'], required: ['runners'] },
  [CLASSROOM_ACTIONS.checkout]: { inputs: ['repository', 'ref', 'token', 'path', 'fetch-depth', 'submodules'], required: [] },
  [CLASSROOM_ACTIONS.pnpm]: { inputs: ['version', 'dest', 'run_install', 'package_json_file', 'standalone'], required: [] },
  [CLASSROOM_ACTIONS.node]: { inputs: ['node-version', 'node-version-file', 'cache', 'cache-dependency-path', 'registry-url'], required: [] },
};

type Step = { name: string; id?: string; uses?: string; run?: string; with?: Record<string, unknown>; env?: Record<string, string> };
const exercises = listExercises();
const workflow = parse(classroomWorkflow(exercises)) as { name: string; on: string[]; permissions: Record<string, string>; jobs: Record<string, { 'runs-on': string; steps: Step[] }> };
const steps = workflow.jobs['run-autograding-tests']!.steps;
const graders = steps.filter((s) => s.uses === CLASSROOM_ACTIONS.grader);

describe('the GitHub Classroom workflow', () => {
  it('is the one workflow and job the reporter reports from', () => {
    expect(workflow.name).toBe('Autograding Tests');
    expect(Object.keys(workflow.jobs)).toEqual(['run-autograding-tests']);
    expect(workflow.on).toEqual(['push', 'repository_dispatch']);
    expect(workflow.permissions).toEqual({ checks: 'write', actions: 'read', contents: 'read' });
  });

  it('gives every action only the inputs it declares, and each required one', () => {
    for (const s of steps.filter((x) => x.uses)) {
      const doc = DOCUMENTED[s.uses!];
      expect(doc, `${s.uses} is not an action this test knows`).toBeDefined();
      const given = Object.keys(s.with ?? {});
      expect(given.filter((k) => !doc!.inputs.includes(k)), s.name).toEqual([]);
      expect(doc!.required.filter((k) => !given.includes(k)), s.name).toEqual([]);
    }
    // pnpm/action-setup without `version` takes it from package.json's packageManager.
    expect((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { packageManager?: string }).packageManager).toMatch(/^pnpm@\d+\.\d+\.\d+$/);
  });

  it('installs pnpm, then Node with its cache, then the locked dependencies, before any grading', () => {
    const order = steps.map((s) => s.uses ?? s.run);
    expect(order.slice(0, 4)).toEqual([CLASSROOM_ACTIONS.checkout, CLASSROOM_ACTIONS.pnpm, CLASSROOM_ACTIONS.node, 'pnpm install --frozen-lockfile']);
    expect(steps[2]!.with).toEqual({ 'node-version': 20, cache: 'pnpm' });
  });

  it("has one step per exercise running `pnpm grade exNN --no-hidden`, worth the sum of the exercise's public points", () => {
    expect(graders.map((s) => s.id)).toEqual(exercises.map((e) => e.manifest.id));
    for (const [i, s] of graders.entries()) {
      const m = exercises[i]!.manifest;
      const publicPoints = m.checks.filter((c) => c.visibility === 'public').reduce((a, c) => a + c.points, 0);
      expect(s.with!.command).toBe(`pnpm grade ${m.id} --no-hidden`);
      expect(s.with!['max-score']).toBe(publicPoints);
      expect(Number.isInteger(s.with!['max-score'])).toBe(true);
      // Minutes, at most the action's six hours, at least the exercise's own limit.
      expect(s.with!.timeout as number).toBeGreaterThanOrEqual(m.timeLimits.totalMs / 60_000);
      expect(s.with!.timeout as number).toBeLessThanOrEqual(360);
      expect(s.with!['test-name']).toBe(`${m.id} ${m.title} (public checks)`);
    }
  });

  it("has the reporter read each step's result and list every step in runners, in the form it accepts", () => {
    const reporter = steps.at(-1)!;
    expect(reporter.uses).toBe(CLASSROOM_ACTIONS.reporter);
    const ids = graders.map((s) => s.id!);
    expect(reporter.with!.runners).toBe(ids.join(','));
    expect(reporter.with!.runners).toMatch(/^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$/);
    expect(reporter.env).toEqual(Object.fromEntries(ids.map((id) => [`${id.toUpperCase()}_RESULTS`, `\${{steps.${id}.outputs.result}}`])));
  });

  it('refuses public points the command grader cannot count (it reads whole numbers only)', () => {
    const [first] = exercises;
    const half = { ...first!, manifest: { ...first!.manifest, checks: first!.manifest.checks.map((c, i) => (i === 0 ? { ...c, points: 1.5 } : c)) } };
    expect(() => classroomWorkflow([half])).toThrow(ClassroomError);
    expect(() => classroomWorkflow([half])).toThrow(/worth 4.5 points.*whole points only/);
  });
});
