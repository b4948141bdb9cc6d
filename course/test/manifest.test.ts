/**
 * The course manifest: the real course.json is valid and has the five
 * chapters in order, and the schema refuses what the course must not hold.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chapterOf, CourseManifestError, loadCourse, UnknownChapterError } from '../src/index.ts';
import { cleanup, scratchRepo } from './helpers.ts';

afterAll(cleanup);

describe('course/course.json', () => {
  it('has the five chapters in order, each with its exercises', () => {
    const course = loadCourse();
    expect(course.chapters.map((c) => c.title)).toEqual([
      'Data parallelism and ring all-reduce',
      'Sharding the training state: ZeRO and FSDP',
      'Tensor parallelism',
      'Pipeline parallelism',
      'Profiling one worker, and scaling laws',
    ]);
    expect(course.chapters.map((c) => c.number)).toEqual([1, 2, 3, 4, 5]);
    expect(course.chapters[0]!.exercises).toEqual(['ex01-allreduce-mean', 'ex02-ring-scatter-reduce', 'ex04-ddp-from-scratch', 'ex05-bucketed-overlap', 'ex06-gradient-accumulation']);
    expect(course.chapters[1]!.exercises).toEqual(['ex03-zero-sharding', 'ex07-zero-stage-2', 'ex08-fsdp']);
    expect(course.chapters[2]!.exercises).toEqual(['ex09-megatron-mlp', 'ex10-vocab-parallel-ce']);
    expect(course.chapters[3]!.exercises).toEqual(['ex11-gpipe', 'ex12-1f1b']);
    expect(course.chapters[4]!.exercises).toEqual(['ex13-profile-before-scaling', 'ex14-collective-by-size', 'ex15-compute-optimal']);
    expect(course.chapters.map((c) => c.status)).toEqual(['complete', 'complete', 'complete', 'complete', 'complete']);
    expect(course.chapters.every((c) => c.knowledgeCheck?.questions === 10 && c.knowledgeCheck.passPercent === 80)).toBe(true);
  });

  it('finds chapters by number and refuses others', () => {
    const course = loadCourse();
    expect(chapterOf(course, '2').id).toBe('sharding');
    expect(() => chapterOf(course, '6')).toThrow(UnknownChapterError);
    expect(() => chapterOf(course, 'one')).toThrow(/chapters 1 to 5/);
  });
});

describe('the course schema', () => {
  function broken(edit: (m: any) => void): CourseManifestError {
    const root = scratchRepo();
    const file = join(root, 'course', 'course.json');
    const m = JSON.parse(readFileSync(file, 'utf8'));
    edit(m);
    writeFileSync(file, JSON.stringify(m));
    try {
      loadCourse(root);
    } catch (e) {
      if (e instanceof CourseManifestError) return e;
      throw e;
    }
    throw new Error('the manifest was accepted');
  }

  it('requires a knowledge check and an experiment of a complete chapter', () => {
    expect(broken((m) => delete m.chapters[0].knowledgeCheck).problems.join('\n')).toMatch(/missing field 'knowledgeCheck'/);
    expect(broken((m) => (m.chapters[1].experiments = [])).problems.join('\n')).toMatch(/experiments.*fewer than 1/);
  });

  it('refuses unknown fields, bad exercise names, paths that leave the course and duplicate chapter ids', () => {
    expect(broken((m) => (m.chapters[0].points = 3)).problems.join('\n')).toMatch(/unknown field 'points'/);
    expect(broken((m) => m.chapters[0].exercises.push('exercise-four')).problems.join('\n')).toMatch(/exercises\/5.*pattern/);
    expect(broken((m) => (m.chapters[0].reading = '../README.md')).problems.join('\n')).toMatch(/reading.*pattern/);
    expect(broken((m) => (m.chapters[1].id = m.chapters[0].id)).problems.join('\n')).toMatch(/two chapters have the id 'data-parallelism'/);
  });
});
