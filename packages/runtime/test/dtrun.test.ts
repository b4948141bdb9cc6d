import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const DTRUN = join(pkg, 'bin', 'dtrun.mjs');

/** Runs `node bin/dtrun.mjs ...args` from the package folder (or `cwd`); resolves with its exit code and output. */
function dtrun(args: string[], cwd = pkg): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DTRUN, ...args], { cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('dtrun', () => {
  it('runs the ring example on N workers: each line tagged [rank r], a summary line, exit 0, and --trace writes JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtrun-test-'));
    const trace = join(dir, 'ring-trace.json');
    try {
      const r = await dtrun(['-n', '3', '--trace', trace, 'examples/ring.ts']);

      expect(r.code).toBe(0);
      expect(r.stdout.trim().split('\n').sort()).toEqual([0, 1, 2].map((k) => `[rank ${k}] rank ${k} of 3: sum of all ranks = 3`));
      expect(r.stderr).toMatch(/^dtrun: 3\/3 ranks ok · 9 messages · 36 B sent · virtual time 30\.0 µs · wall \d+ ms · trace written to .*ring-trace\.json\n$/);
      const written = JSON.parse(readFileSync(trace, 'utf8')) as { worldSize: number; trace: { src: number; dst: number }[]; stats: unknown[] };
      expect(written.worldSize).toBe(3);
      expect(written.trace).toHaveLength(9);
      expect(written.trace.every((e) => e.dst === (e.src + 1) % 3)).toBe(true);
      expect(written.stats).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--device and --profile print the device table after the run; --trace writes a Chrome trace that keeps dtrun\'s fields', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtrun-test-'));
    const trace = join(dir, 'ring-trace.json');
    try {
      const r = await dtrun(['-n', '2', '--device', 'course', '--profile', '--trace', trace, 'examples/ring.ts']);

      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^device course: 10\.00 GFLOP\/s float32, 5\.00 GFLOP\/s float64, 80\.00 GB\/s memory bandwidth, 64\.0 MiB$/m);
      expect(r.stdout).toMatch(/^rank 1 · virtual time [\d.]+ µs: compute /m);
      const written = JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: { ph: string; cat?: string }[]; worldSize: number; trace: unknown[]; stats: unknown[] };
      expect(written.worldSize).toBe(2);
      expect(written.trace).toHaveLength(4);
      expect(written.stats).toHaveLength(2);
      expect(written.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'message')).toHaveLength(8);
      expect(written.traceEvents.some((e) => e.cat === 'op')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown device with the list of presets and exit 2', async () => {
    const r = await dtrun(['-n', '2', '--device', 'tpu-v9', 'examples/ring.ts']);

    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dtrun: unknown device "tpu-v9"; presets are course, a100-40gb, a100-80gb, h100-80gb, v100-32gb, t4\nusage: /);
  });

  it("exits 1 when a rank fails, after the ranks' output, with one line per failed rank", async () => {
    const r = await dtrun(['-n', '2', 'test/programs/dtrun-fails.ts']);

    expect(r.code).toBe(1);
    expect(r.stdout.trim().split('\n').sort()).toEqual(['[rank 0] hello from rank 0', '[rank 1] hello from rank 1']);
    expect(r.stderr).toContain('rank 1: error: Error: rank 1 gives up');
    expect(r.stderr).toContain('rank 0: error: RankFailedError: rank 0: barrier cannot complete because rank 1 failed: Error: rank 1 gives up');
    expect(r.stderr).toMatch(/dtrun: 0\/2 ranks ok · 0 messages · 0 B sent · virtual time 0\.0 µs · wall \d+ ms\n$/);
  });

  it('runs a rank program anywhere in the repository that imports the packages by name, on both backends', async () => {
    // The root's package.json depends on no workspace package, so its node_modules links none:
    // dtrun resolves them as the workspace's own (bin/workspace-resolve.cjs).
    const root = join(pkg, '..', '..');
    const file = join(root, `.dtrun-scratch-${process.pid}.ts`);
    writeFileSync(
      file,
      [
        "import { tensor } from '@dtlab/tensor';",
        "import type { Comm } from '@dtlab/runtime';",
        "import { allReduce } from '@dtlab/collectives';",
        'export async function main(comm: Comm): Promise<void> {',
        '  const t = tensor([comm.rank + 1]);',
        '  await allReduce(comm, t);',
        '  console.log(`rank ${comm.rank}: sum ${t.item()}`);',
        '}',
      ].join('\n'),
    );
    try {
      for (const backend of ['workers', 'inline']) {
        const r = await dtrun(['-n', '3', '--backend', backend, file], root);
        expect(r.code, `${backend}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toMatch(/rank 2: sum 6/);
      }
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('prints the usage line and exits 0 for --help', async () => {
    const r = await dtrun(['--help']);

    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: dtrun -n N /);
  });

  // Each of these exits before launching anything, so they can run side by side.
  it.concurrent.for([
    [['-n', '0', 'examples/ring.ts'], 'dtrun: -n must be a positive integer'],
    [['-n', '2', '--backend', 'gpu', 'examples/ring.ts'], 'dtrun: --backend must be inline or workers'],
    [['-n', '2'], 'dtrun: no program file given'],
    [['-n', '2', '--verbose', 'examples/ring.ts'], 'dtrun: unknown option --verbose'],
    [['-n', '2', 'examples/no-such-file.ts'], 'dtrun: no such file: examples/no-such-file.ts'],
  ] as const)('exits 2 on bad arguments %j, saying what is wrong', async ([args, message], { expect }) => {
    const r = await dtrun([...args]);

    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });
});
