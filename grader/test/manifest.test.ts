/**
 * Exercise manifests: every exercise's exercise.json is valid, and a broken
 * manifest is refused with a message that names the field.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManifestError, validateManifest } from '../src/manifest.ts';
import { exerciseFolders, findExercise, listExercises, UnknownExerciseError } from '../src/exercises.ts';
import { EXERCISES_DIR, checkModulePath } from '../src/paths.ts';

const ex01 = JSON.parse(readFileSync(join(EXERCISES_DIR, 'ex01-allreduce-mean', 'exercise.json'), 'utf8')) as Record<string, unknown>;

describe('the curriculum', () => {
  it('has exercises, each with a valid manifest in its own folder', () => {
    const all = listExercises();
    expect(all.length).toBeGreaterThanOrEqual(1);
    for (const e of all) expect(e.folder).toBe(`${e.manifest.id}-${e.manifest.slug}`);
  });
  it('has a public check module for every exercise, exporting a function per public check', async () => {
    for (const e of listExercises()) {
      const path = checkModulePath(e.folder, 'public');
      expect(path, `${e.folder} has no grader/checks/${e.folder}/checks.ts`).not.toBeNull();
      const mod = (await import(path!)) as { checks: Record<string, unknown> };
      for (const c of e.manifest.checks.filter((x) => x.visibility === 'public')) expect(typeof mod.checks[c.id], `${e.folder}: public check ${c.id}`).toBe('function');
    }
  });
  it('has a hidden check module exporting a function per hidden check, where hidden checks exist', async () => {
    for (const e of listExercises()) {
      const path = checkModulePath(e.folder, 'hidden');
      if (!path) continue;
      const mod = (await import(path)) as { checks: Record<string, unknown> };
      for (const c of e.manifest.checks.filter((x) => x.visibility === 'hidden')) expect(typeof mod.checks[c.id], `${e.folder}: hidden check ${c.id}`).toBe('function');
    }
  });
});

describe('finding an exercise', () => {
  it('accepts ex01, ex1, 1, 01 and the folder name', () => {
    for (const name of ['ex01', 'ex1', '1', '01', 'ex01-allreduce-mean']) expect(findExercise(name).folder).toBe('ex01-allreduce-mean');
  });
  it('lists the exercises there are when the name is unknown', () => {
    expect(() => findExercise('ex99')).toThrow(UnknownExerciseError);
    expect(() => findExercise('ex99')).toThrow(new RegExp(exerciseFolders()[0]!));
  });
});

describe('validation', () => {
  const broken = (patch: Record<string, unknown>) => () => validateManifest({ ...ex01, ...patch }, 'exercise.json');

  it('accepts exercise 1 as it is', () => {
    expect(validateManifest(ex01, 'exercise.json', 'ex01-allreduce-mean').id).toBe('ex01');
  });
  it('names a missing field', () => {
    const { hints: _hints, ...rest } = ex01;
    expect(() => validateManifest(rest, 'exercise.json')).toThrow(/missing field 'hints'/);
  });
  it('names an unknown field', () => {
    expect(broken({ hint: 'x' })).toThrow(/unknown field 'hint'/);
  });
  it('needs at least three non-empty hints', () => {
    expect(broken({ hints: ['only one hint here'] })).toThrow(/\/hints/);
    expect(broken({ hints: ['', '', ''] })).toThrow(ManifestError);
  });
  it('refuses points that do not add up to totalPoints', () => {
    expect(broken({ totalPoints: 11 })).toThrow(/totalPoints is 11 but the checks' points add up to 10/);
  });
  it('refuses repeated check ids', () => {
    const checks = [...(ex01.checks as object[]), (ex01.checks as object[])[0]];
    expect(broken({ checks, totalPoints: 11 })).toThrow(/repeated: two-ranks/);
  });
  it('refuses a folder that does not match id and slug', () => {
    expect(() => validateManifest(ex01, 'exercise.json', 'ex01-wrong')).toThrow(/should be 'ex01-allreduce-mean'/);
  });
  it('refuses an id that is not exNN and an entry outside src/', () => {
    expect(broken({ id: 'e1' })).toThrow(/\/id/);
    expect(broken({ entry: [{ file: '../x.ts', exports: ['f'] }] })).toThrow(/\/entry\/0\/file/);
  });
});
