/** A program module that allocates at load time and keeps it: counted on workers, where modules load in the rank. */
import { memory, type Comm } from '../../src/index.ts';

const atLoad = new Float32Array(25_000);

/** Marks with the key; the module's buffer is still held. */
export async function main(comm: Comm, key: string) {
  void comm;
  const m = await memory.mark('after load', { key });
  return { mark: m, held: atLoad.length };
}
