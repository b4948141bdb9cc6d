// A rank program module with a top-level await, which the workers backend cannot load.
import type { Comm } from '../../src/index.ts';

const ready = await Promise.resolve(true);

export async function main(comm: Comm): Promise<boolean> {
  return ready && comm.rank >= 0;
}
