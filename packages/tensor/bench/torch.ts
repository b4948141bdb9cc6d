/**
 * torch (one thread) as a peer of the tensor benchmark: Debian's python3-torch
 * in a child process (torch_peer.py), driven one command at a time so that
 * its samples can alternate with dtlab's and tfjs's in the same run.
 *
 * When /usr/bin/python3 cannot import torch the benchmark runs without it and
 * says so (on Debian: apt-get install python3-torch).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'torch_peer.py');

/** A reply from torch_peer.py: one JSON object. */
export type Reply = Record<string, unknown>;

/** Base64 of a typed array's bytes (little-endian, as torch_peer.py reads them). */
export function b64(x: Float32Array | Int32Array): string {
  return Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('base64');
}

/** What torch_peer.py reports about itself: torch's version, its thread count, the BLAS library it loaded. */
export interface TorchInfo {
  torch: string;
  threads: number;
  blas: string;
}

/** A running torch_peer.py. */
export class TorchPeer {
  private readonly waiting: ((line: string) => void)[] = [];
  private stderr = '';
  info: TorchInfo = { torch: '?', threads: 0, blas: '?' };

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => this.waiting.shift()?.(line));
  }

  /** Starts torch_peer.py, or says why torch is not there. */
  static async start(): Promise<TorchPeer | { skipped: string }> {
    if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0) {
      return { skipped: `torch is not importable by ${PYTHON} (on Debian: apt-get install python3-torch)` };
    }
    const peer = new TorchPeer(spawn(PYTHON, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] }));
    const hello = await peer.request({ op: 'hello' });
    if ('error' in hello) {
      peer.close();
      return { skipped: `torch_peer.py failed: ${String(hello.error)}` };
    }
    peer.info = hello as unknown as TorchInfo;
    return peer;
  }

  /** Sends one command and waits for its reply; a dead or silent peer gives `{ error }`. */
  request(cmd: Reply): Promise<Reply> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve({ error: `torch_peer.py exited (${this.child.exitCode}): ${this.stderr.trim().split('\n').slice(-2).join(' | ')}` });
      const onExit = () => resolve({ error: `torch_peer.py exited: ${this.stderr.trim().split('\n').slice(-2).join(' | ')}` });
      this.child.once('exit', onExit);
      this.waiting.push((line) => {
        this.child.off('exit', onExit);
        resolve(JSON.parse(line) as Reply);
      });
      this.child.stdin.write(JSON.stringify(cmd) + '\n');
    });
  }

  /** Milliseconds per call of `calls` back-to-back calls of what was set up last ('matmul' or 'mlp'), timed inside python. */
  async time(what: 'matmul' | 'mlp', calls: number): Promise<number> {
    const r = await this.request({ op: 'time', what, calls });
    if (typeof r.ms !== 'number') throw new Error(`torch peer: ${String(r.error)}`);
    return r.ms;
  }

  /** Ends the child (it also ends when its stdin closes). */
  close(): void {
    this.child.stdin.end();
  }
}
