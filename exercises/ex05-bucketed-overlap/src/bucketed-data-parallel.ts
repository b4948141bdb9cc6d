/**
 * Exercise 5: bucketed DDP that overlaps communication with backward.
 *
 * One all-reduce per parameter pays one latency per tensor, and a model has
 * hundreds of small tensors. DDP packs the gradients into buckets of about
 * `bucketBytes` and all-reduces each bucket as one flat tensor, started from
 * gradient hooks while backward is still running, so that the exchange hides
 * behind the rest of backward. See README.md.
 *
 * You may use @dtlab/tensor, @dtlab/runtime and @dtlab/collectives.
 */
import { flattenTensors, noGrad, unflattenTensors, type Tensor, type nn } from '@dtlab/tensor';
import type { Comm, Work } from '@dtlab/runtime';
import { allReduce, broadcast } from '@dtlab/collectives';
import { modelTensors, uniqueParameters } from './model-tensors.ts';

/** Options of `BucketedDataParallel.create`. */
export interface BucketOptions {
  /** A bucket is closed once its gradients hold at least this many bytes (float32: 4 bytes an element). */
  bucketBytes: number;
}

/** One bucket: its parameters, and how many of their gradients the current backward pass has completed. */
interface Bucket {
  params: Tensor[];
  ready: number;
}

/**
 * Splits `params` into buckets, in the order given: each parameter joins the
 * open bucket, and the bucket is closed once its gradients hold at least
 * `bucketBytes`; what is left at the end is the last bucket.
 */
function assignBuckets(params: Tensor[], bucketBytes: number): Tensor[][] {
  const buckets: Tensor[][] = [];
  let open: Tensor[] = [];
  let bytes = 0;
  for (const p of params) {
    open.push(p);
    bytes += p.numel * 4;
    if (bytes >= bucketBytes) {
      buckets.push(open);
      open = [];
      bytes = 0;
    }
  }
  if (open.length > 0) buckets.push(open);
  return buckets;
}

/** Averages a bucket's gradients over the ranks: one flat all-reduce, copied back into each `.grad`. */
async function reduceBucket(comm: Comm, params: Tensor[]): Promise<void> {
  const flat = flattenTensors(params.map((p) => p.grad!));
  await allReduce(comm, flat, { op: 'avg' });
  const parts = unflattenTensors(flat, params.map((p) => p.shape));
  noGrad(() => params.forEach((p, i) => p.grad!.copy_(parts[i]!)));
}

/**
 * Data parallelism with bucketed gradient all-reduces, as torch's
 * DistributedDataParallel does it. A training step on every rank:
 *
 *     model.zeroGrad();
 *     const loss = nn.crossEntropy(ddp.forward(x), labels);   // this rank's part of the batch
 *     loss.backward();
 *     await ddp.finishGradientSynchronization();
 *     optimizer.step();
 *
 * Every parameter gets a gradient in every backward pass. Afterwards every
 * `.grad` holds the mean over the ranks. Buckets are all-reduced in bucket
 * order on every rank, each as soon as its gradients are complete and the
 * buckets before it have been started.
 */
export class BucketedDataParallel {
  private readonly buckets: Bucket[];
  /** The next bucket to launch in this backward pass. */
  private next = 0;
  private readonly pending: Work<unknown>[] = [];

  /**
   * Wraps `model` on this rank: every rank gets rank 0's values (frozen
   * tensors too), and the gradients are split into buckets of
   * `opts.bucketBytes`.
   */
  static async create(comm: Comm, model: nn.Module, opts: BucketOptions): Promise<BucketedDataParallel> {
    for (const t of modelTensors(model)) await broadcast(comm, t, { src: 0 });
    return new BucketedDataParallel(comm, model, opts);
  }

  private constructor(
    readonly comm: Comm,
    /** The wrapped model. */
    readonly model: nn.Module,
    opts: BucketOptions,
  ) {
    // Buckets follow the model's own order of parameters, so that the
    // first layer's gradients are in the first bucket.
    this.buckets = assignBuckets(uniqueParameters(model), opts.bucketBytes).map((params) => ({ params, ready: 0 }));
    for (const bucket of this.buckets) {
      for (const p of bucket.params) {
        p.registerPostAccumulateGradHook(() => {
          bucket.ready++;
          this.launchReadyBuckets();
        });
      }
    }
  }

  /**
   * Starts, in bucket order, every bucket whose gradients are complete: a
   * bucket waits for the ones before it, so that every rank launches its
   * all-reduces in the same order whatever order its gradients complete in.
   */
  private launchReadyBuckets(): void {
    while (this.next < this.buckets.length && this.buckets[this.next]!.ready === this.buckets[this.next]!.params.length) {
      const k = this.next++;
      const bucket = this.buckets[k]!;
      this.pending.push(this.comm.background(() => reduceBucket(this.comm, bucket.params), `bucket ${k}`));
    }
  }

  /** Runs the wrapped model's forward pass. */
  forward(...inputs: Tensor[]): Tensor {
    return this.model.forward(...inputs);
  }

  /**
   * Waits until every bucket of the backward pass just run has been
   * averaged over the ranks, and gets ready for the next backward pass.
   * Call it after `backward()` and before the optimizer step, on every rank.
   */
  async finishGradientSynchronization(): Promise<void> {
    for (const work of this.pending.splice(0)) await work.wait();
    for (const bucket of this.buckets) bucket.ready = 0;
    this.next = 0;
  }
}
