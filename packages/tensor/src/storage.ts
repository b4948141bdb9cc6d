/**
 * Storage: the flat typed array that one tensor and all of its views share,
 * plus a version counter that every in-place write bumps. Autograd compares
 * versions to catch a tensor modified after the forward pass read it.
 */
import type { TypedArray } from './dtype.ts';

/** A flat buffer shared by a tensor and its views. */
export class Storage {
  /** Incremented by every in-place write to any view of this storage. */
  version = 0;
  constructor(public data: TypedArray) {}
}
