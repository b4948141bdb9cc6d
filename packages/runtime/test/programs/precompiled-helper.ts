/** A module the precompiled-modules test program imports as './precompiled-helper.js'. */
import type { Tensor } from '@dtlab/tensor';

/** This module's own URL, as import.meta gives it. */
export const url: string = import.meta.url;

/** `t` times two, as a new tensor. */
export function double(t: Tensor): Tensor {
  return t.mul(2);
}
