/**
 * The interactive knowledge check under a real terminal: tmux runs
 * `pnpm quiz 1` in a pseudo-terminal, the test types into it with
 * send-keys and reads the screen with capture-pane, as a student would.
 * It answers eight questions right and two wrong, types one malformed
 * answer (refused in place, not counted), and checks the score on screen
 * against the regrade of the attempt file the run wrote. An experiment's
 * prediction is typed the same way.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import bank1 from '../chapters/01-data-parallelism/bank.ts';
import { COURSE_DIR, REPO_ROOT } from '../src/paths.ts';
import { drawQuiz, formatNumber, regradeAttempt } from '../src/index.ts';
import { cleanup, scratch } from './helpers.ts';

const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;
const SOCKET = `dtlab-course-test-${process.pid}`;

function tmux(...args: string[]): string {
  const r = spawnSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** The whole screen of session `name` with its scrollback. */
function screen(name = 'quiz'): string {
  return tmux('capture-pane', '-p', '-J', '-S', '-2000', '-t', name);
}

/** Waits (polling, never timing anything) until `count` occurrences of `text` are on the screen of session `name`. */
async function waitFor(text: string, count = 1, limitMs = 60_000, name = 'quiz'): Promise<void> {
  const until = Date.now() + limitMs;
  for (;;) {
    const s = screen(name);
    if (s.split(text).length - 1 >= count) return;
    if (Date.now() > until) throw new Error(`'${text}' (${count}×) did not appear on the screen:\n${s}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

afterAll(() => {
  if (HAS_TMUX) spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
  cleanup();
});

if (!HAS_TMUX) {
  describe('pnpm quiz 1 in a terminal', () => {
    // CI installs tmux (.ci/run): there, a missing tmux is a broken setup, not a reason to skip.
    if (process.env['CI']) it('needs tmux, which .ci/run installs', () => expect.fail('tmux is not installed: .ci/run should have installed it with apt-get'));
    else it.skip('is skipped: tmux is not installed here (apt-get install -y tmux runs it)', () => {});
  });
}

describe.skipIf(!HAS_TMUX)('pnpm quiz 1 in a terminal (tmux)', () => {
  it('asks ten questions, says right or wrong and why after each, refuses a malformed answer in place, and scores the attempt', async () => {
    const dir = scratch();
    const seed = 2718;
    const drawn = drawQuiz(bank1, seed, { count: 10 });
    const command = `cd ${REPO_ROOT} && node --import tsx ${join(COURSE_DIR, 'src', 'cli', 'quiz.ts')} 1 --seed ${seed} --dir ${dir}; echo "quiz exited with $?"; sleep 600`;
    tmux('new-session', '-d', '-s', 'quiz', '-x', '160', '-y', '50', command);
    const wrongAt = new Set([1, 5]);
    let malformedTyped = false;
    let rights = 0;
    let wrongs = 0;
    for (const d of drawn) {
      await waitFor(`Question ${d.index + 1} of 10`);
      const p = d.presented;
      const wrong = wrongAt.has(d.index);
      if (p.kind === 'choice') {
        const target = p.options.findIndex((o) => (wrong ? !o.correct : o.correct));
        for (let k = 0; k < target; k++) tmux('send-keys', '-t', 'quiz', 'Down');
        tmux('send-keys', '-t', 'quiz', 'Enter');
      } else {
        if (!malformedTyped) {
          // Not a number: refused in place with the reason, and asked again.
          tmux('send-keys', '-t', 'quiz', '-l', 'lots');
          tmux('send-keys', '-t', 'quiz', 'Enter');
          await waitFor("'lots' is not a number");
          for (let k = 0; k < 4; k++) tmux('send-keys', '-t', 'quiz', 'BSpace');
          malformedTyped = true;
        }
        const text = wrong ? formatNumber(p.answer * 2 + 1) : `${formatNumber(p.answer)}${p.format.unit ? ` ${p.format.unit}` : ''}`;
        tmux('send-keys', '-t', 'quiz', '-l', text);
        tmux('send-keys', '-t', 'quiz', 'Enter');
      }
      if (wrong) await waitFor('✗ Wrong.', ++wrongs);
      else await waitFor('✓ Right.', ++rights);
    }
    expect(malformedTyped).toBe(true);
    await waitFor('quiz exited with 0');
    const s = screen();
    expect(s).toMatch(/Score: 8\/10 \(80%\): passed \(80% to pass\)\./);
    expect(s).toMatch(/The answer is \(|the answer is /); // the feedback of a wrong answer names the right one
    const r = await regradeAttempt(join(dir, '.course', 'quiz-1.json'));
    expect(r).toMatchObject({ status: 'graded', score: 8, maxScore: 10, passed: true, attempts: 1 });
    expect(r.attemptResults[0]!.mode).toBe('interactive');
    expect(r.questions.filter((q) => q.status === 'wrong').map((q) => q.index)).toEqual([1, 5]);
  });

  it('asks an experiment\'s prediction in the terminal, refusing a malformed number, then runs and records it', async () => {
    const dir = scratch();
    const command = `cd ${REPO_ROOT} && node --import tsx ${join(COURSE_DIR, 'src', 'cli', 'experiment.ts')} zero1-optimizer-memory --dir ${dir}; echo "experiment exited with $?"; sleep 600`;
    tmux('new-session', '-d', '-s', 'exp', '-x', '160', '-y', '60', command);
    await waitFor('How many KiB of moments will the largest shard hold on 8 ranks?', 1, 60_000, 'exp');
    tmux('send-keys', '-t', 'exp', '-l', 'a lot');
    tmux('send-keys', '-t', 'exp', 'Enter');
    await waitFor("'a lot' is not a number in KiB", 1, 60_000, 'exp');
    for (let k = 0; k < 5; k++) tmux('send-keys', '-t', 'exp', 'BSpace');
    tmux('send-keys', '-t', 'exp', '-l', '83.3');
    tmux('send-keys', '-t', 'exp', 'Enter');
    await waitFor('experiment exited with 0', 1, 120_000, 'exp');
    const s = screen('exp');
    expect(s).toMatch(/Your prediction held: 83\.3 KiB/);
    expect(s).toMatch(/Recorded in notes\/experiments\.md/);
    expect(readFileSync(join(dir, 'notes', 'experiments.md'), 'utf8')).toMatch(/^## zero1-optimizer-memory · /m);
  });
});
