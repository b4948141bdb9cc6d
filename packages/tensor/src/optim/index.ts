/** Optimizers with torch's exact update formulas. */
export { Optimizer } from './optimizer.ts';
export { SGD, type SGDOptions, type SGDState } from './sgd.ts';
export { Adam, AdamW, type AdamOptions, type AdamState } from './adam.ts';
