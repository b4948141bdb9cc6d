/**
 * How a memory tracker learns, after a forced full collection, which of the
 * buffers it counts are gone. Two ways, by what the host offers:
 *
 * - **a finalization registry with `cleanupSome`** (V8 with
 *   --harmony-weak-refs-with-cleanup-some, which the runtime sets): the
 *   registry holds no buffer alive, and `cleanupSome` reports at once the
 *   ones the collection freed. A point can then run anywhere, in the middle
 *   of a computation too.
 * - **WeakRefs** otherwise: a WeakRef keeps its target alive until the end
 *   of the job that made it or last read it (the language's rule, so that
 *   `deref()` gives the same answer within a job); a point finds a buffer
 *   gone only at the start of a job, which the runtime arranges (every
 *   delivery runs in a task of its own).
 *
 * Either way a buffer found gone stays gone, and it is found at the first
 * point after its last reference went: what is counted depends on where the
 * points are, not on when the collector would have run by itself.
 */

/** A finalization registry with V8's `cleanupSome` (a constructor from a context made with the flag on). */
export type RegistryWithCleanup = new (cleanup: (held: unknown) => void) => {
  register(target: object, held: unknown, token?: object): void;
  unregister(token: object): boolean;
  cleanupSome(cleanup?: (held: unknown) => void): void;
};

/** What a tracker needs of liveness. */
export interface Liveness<R extends object> {
  /** Whether a point may run in the middle of a job, not only at the start of one. */
  readonly anywhere: boolean;
  /** Starts watching `target` for record `rec`. */
  watch(target: object, rec: R): void;
  /** Stops watching (the record was released for sure); `gone` may still report it once, which the tracker skips. */
  unwatch(rec: R): void;
  /** After a full collection: the records whose targets are gone (each reported once). */
  gone(): R[];
}

/** Liveness through a finalization registry's `cleanupSome`. */
export class RegistryLiveness<R extends object> implements Liveness<R> {
  readonly anywhere = true;
  private dead: R[] = [];
  private readonly registry: InstanceType<RegistryWithCleanup>;

  constructor(Registry: RegistryWithCleanup) {
    // The registry's own callback may run whenever the collector ran by itself; what it reports waits for the next point.
    this.registry = new Registry((held) => void this.dead.push(held as R));
  }

  watch(target: object, rec: R): void {
    // No unregister token: a token costs every registration a lookup entry, and a record released
    // for sure is marked so by the tracker, which skips it when the registry reports it later.
    this.registry.register(target, rec);
  }

  unwatch(): void {
    // nothing to do: see watch
  }

  gone(): R[] {
    this.registry.cleanupSome((held) => void this.dead.push(held as R));
    const out = this.dead;
    this.dead = [];
    return out;
  }
}

/** Liveness through WeakRefs (points only at the start of a job; see the file comment). */
export class WeakRefLiveness<R extends object> implements Liveness<R> {
  readonly anywhere = false;
  private readonly refs = new Map<R, WeakRef<object>>();

  watch(target: object, rec: R): void {
    this.refs.set(rec, new WeakRef(target));
  }

  unwatch(rec: R): void {
    this.refs.delete(rec);
  }

  gone(): R[] {
    const out: R[] = [];
    for (const [rec, ref] of this.refs) {
      const t = ref.deref();
      // An ArrayBuffer that was transferred away reads as zero bytes long.
      if (t === undefined || (t instanceof ArrayBuffer && t.byteLength === 0 && (rec as { bytes?: number }).bytes! > 0)) {
        this.refs.delete(rec);
        out.push(rec);
      }
    }
    return out;
  }
}
