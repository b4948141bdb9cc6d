/**
 * checkCourse and addExerciseToChapter on scratch copies of the course:
 * the real course is sound; a chapter that lists a missing exercise, an
 * exercise in no chapter or in two, a question whose answer code throws
 * for some seed, a misconception graded right, a broken experiment and a
 * leaking import are each caught, by name.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addExerciseToChapter, checkCourse, CourseEditError, loadCourse, type CourseFinding } from '../src/index.ts';
import { cleanup, scratchRepo, write } from './helpers.ts';

afterAll(cleanup);

const errors = (f: CourseFinding[]) => f.filter((x) => x.level === 'error');

function editManifest(root: string, edit: (m: any) => void): void {
  const file = join(root, 'course', 'course.json');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  edit(m);
  writeFileSync(file, JSON.stringify(m, null, 2));
}

describe('checkCourse', () => {
  it('finds no error in the course, and runs its experiments', async () => {
    const found = await checkCourse(undefined, { runExperiments: true });
    expect(errors(found)).toEqual([]);
    expect(found.filter((f) => f.level === 'warning').map((f) => `${f.subject}: ${f.message}`)).toEqual([]);
  });

  it('warns when an exercise manifest names another chapter than the course manifest does', async () => {
    const root = scratchRepo();
    const file = join(root, 'exercises', 'ex03-zero-sharding', 'exercise.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"chapter": 2', '"chapter": 3'));
    const found = await checkCourse(root);
    expect(found.filter((f) => f.level === 'warning').map((f) => f.message)).toEqual([expect.stringMatching(/ex03-zero-sharding\/exercise\.json says chapter 3, but course\/course\.json puts it in chapter 2/)]);
  });

  it('catches a chapter that lists a missing exercise, and an exercise in no chapter or in two', async () => {
    const root = scratchRepo();
    editManifest(root, (m) => {
      m.chapters[0].exercises.push('ex99-not-written');
      m.chapters[1].exercises = [];
      m.chapters[2].exercises = ['ex01-allreduce-mean'];
    });
    const found = errors(await checkCourse(root, { seeds: 2 }));
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ check: 'exercises', chapter: 1, subject: 'ex99-not-written', message: expect.stringMatching(/chapter 1 lists ex99-not-written, but exercises\/ex99-not-written\/exercise\.json does not exist/) }),
        expect.objectContaining({ check: 'exercises', subject: 'ex03-zero-sharding', message: expect.stringMatching(/is in no chapter/) }),
        expect.objectContaining({ check: 'exercises', subject: 'ex01-allreduce-mean', message: expect.stringMatching(/listed in chapters 1 and 3/) }),
      ]),
    );
  });

  it('catches a question whose answer code throws for some seed, naming the question and the seed', async () => {
    const root = scratchRepo();
    const bank = join(root, 'course', 'chapters', '01-data-parallelism', 'bank.ts');
    write(
      join(root, 'course', 'chapters', '01-data-parallelism', 'questions', 'broken.ts'),
      `import { numeric } from '../../../src/authoring.ts';
export const broken = numeric({
  id: 'broken-answer',
  topic: 'a question with a bug',
  generate(rng) {
    const n = rng.int(0, 9);
    if (n === 7) throw new RangeError('no formula for 7 ranks');
    return { prompt: 'How many ranks is ' + n + '?', answer: n, format: { unit: null, tolerance: { absolute: 0 } }, explanation: 'It is ' + n + '.', misconceptions: [] };
  },
});
`,
    );
    writeFileSync(bank, readFileSync(bank, 'utf8').replace("import { defineBank } from '../../src/authoring.ts';", "import { defineBank } from '../../src/authoring.ts';\nimport { broken } from './questions/broken.ts';").replace('questions: [', 'questions: [\n    broken,'));
    const found = errors(await checkCourse(root, { seeds: 50 }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ check: 'question', chapter: 1, subject: 'broken-answer' });
    expect(found[0]!.message).toMatch(/^question broken-answer throws for attempt seed \d+ \(variant \d+\): no formula for 7 ranks$/);
  });

  it('catches a misconception graded right, duplicate options, a bank too small, a broken experiment and leaks', async () => {
    const root = scratchRepo();
    const ch1 = join(root, 'course', 'chapters', '01-data-parallelism');
    const avg = join(ch1, 'questions', 'averaging.ts');
    // The first misconception of sum-instead-of-mean-lr made equal to the answer, past the filter that would drop it.
    writeFileSync(avg, readFileSync(avg, 'utf8').replace('misconceptions: distinctMisconceptions(answer, tolerance, [', 'misconceptions: ([').replace('{ value: lr, why:', '{ value: n * lr, why:'));
    const mech = join(ch1, 'questions', 'ring-mechanics.ts');
    writeFileSync(mech, readFileSync(mech, 'utf8').replace("{ text: 'the whole buffer, summed over all ranks', why:", '{ text: `chunk ${r} of the buffer, summed over all ${n} ranks`, why:'));
    const bank = join(root, 'course', 'chapters', '02-sharding', 'bank.ts');
    writeFileSync(bank, readFileSync(bank, 'utf8').replace(/^\s+(adamHidesSum|whyStage3CostsMore|fsdpIsDataParallel|zero2PeakGradients|zero2ReduceAfterBackward|fsdpSavedWeights|fsdpBackwardNeeds),\n/gm, ''));
    const exp = join(ch1, 'experiments', 'ring-allreduce-ranks.ts');
    writeFileSync(exp, readFileSync(exp, 'utf8').replace("chart: { key: 'ofS'", "chart: { key: 'nothing'"));
    write(join(ch1, 'questions', 'extra.ts'), "import { reference } from '@dtlab/grader';\nexport const x = reference;\n");
    write(join(ch1, 'hints.md'), 'See solutions/ex01-allreduce-mean/src for the answer.\n');
    const found = errors(await checkCourse(root, { seeds: 5 }));
    const text = found.map((f) => `${f.check} ${f.subject}: ${f.message}`).join('\n');
    expect(text).toMatch(/question sum-instead-of-mean-lr: question sum-instead-of-mean-lr, attempt seed 1 \(variant \d+\): .*the misconception value [0-9.]+ is graded correct, not wrong/);
    expect(text).toMatch(/question after-scatter-reduce: .*two options with the same text/);
    expect(text).toMatch(/bank chapters\/02-sharding\/bank\.ts: the bank has 13 questions in use; a complete chapter needs at least 15/);
    expect(text).toMatch(/experiment ring-allreduce-ranks: experiment ring-allreduce-ranks: the chart plots 'nothing', which no column has/);
    expect(text).toMatch(/leaks course\/chapters\/01-data-parallelism\/questions\/extra\.ts: .*imports '@dtlab\/grader'/);
    expect(text).toMatch(/leaks course\/chapters\/01-data-parallelism\/hints\.md: .*names a solution or a hidden check/);
  });

  it('catches a reading without its sections and a link that goes nowhere', async () => {
    const root = scratchRepo();
    const reading = join(root, 'course', 'chapters', '02-sharding', 'README.md');
    writeFileSync(reading, readFileSync(reading, 'utf8').replace('## In practice', '## Odds and ends').replace('(../../../exercises/ex03-zero-sharding/README.md)', '(../../../exercises/ex03-zero/README.md)'));
    const text = errors(await checkCourse(root, { seeds: 1 })).map((f) => f.message).join('\n');
    expect(text).toMatch(/has no section for In practice/);
    expect(text).toMatch(/links to \.\.\/\.\.\/\.\.\/exercises\/ex03-zero\/README\.md, which does not exist/);
  });

  it('reports a manifest that does not validate as findings, not as a crash', async () => {
    const root = scratchRepo();
    editManifest(root, (m) => delete m.chapters[0].title);
    expect(await checkCourse(root)).toEqual([expect.objectContaining({ level: 'error', check: 'manifest', message: expect.stringMatching(/missing field 'title'/) })]);
  });
});

describe('addExerciseToChapter', () => {
  it('appends the exercise to its chapter, keeping the file\'s layout, and is idempotent', () => {
    const root = scratchRepo();
    write(join(root, 'exercises', 'ex04-ddp', 'exercise.json'), '{}');
    const before = readFileSync(join(root, 'course', 'course.json'), 'utf8');
    const listed = loadCourse(root).chapters[0]!.exercises;
    const r = addExerciseToChapter(root, 1, 'ex04-ddp');
    expect(r).toMatchObject({ chapter: 1, exercises: [...listed, 'ex04-ddp'], changed: true });
    const after = readFileSync(join(root, 'course', 'course.json'), 'utf8');
    const line = (list: string[]) => `"exercises": [${list.map((e) => `"${e}"`).join(', ')}]`;
    expect(after).toBe(before.replace(line(listed), line([...listed, 'ex04-ddp'])));
    expect(loadCourse(root).chapters[0]!.exercises.at(-1)).toBe('ex04-ddp');
    expect(addExerciseToChapter(root, 1, 'ex04-ddp').changed).toBe(false);
    expect(readFileSync(join(root, 'course', 'course.json'), 'utf8')).toBe(after);
  });

  it('refuses an exercise already in another chapter, a missing folder and a chapter the course lacks', () => {
    const root = scratchRepo();
    write(join(root, 'exercises', 'ex04-ddp', 'exercise.json'), '{}');
    expect(() => addExerciseToChapter(root, 2, 'ex01-allreduce-mean')).toThrow(/already in chapter 1 \(Data parallelism and ring all-reduce\)/);
    expect(() => addExerciseToChapter(root, 1, 'ex05-buckets')).toThrow(/exercises\/ex05-buckets\/exercise\.json does not exist/);
    expect(() => addExerciseToChapter(root, 6, 'ex04-ddp')).toThrow(CourseEditError);
    expect(() => addExerciseToChapter(root, 1, 'ddp')).toThrow(/not an exercise folder name/);
  });
});
