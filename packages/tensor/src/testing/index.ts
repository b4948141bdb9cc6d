/** Parity testing: tolerant comparison and finite-difference gradient checks. */
export { assertClose, DEFAULT_TOLERANCE, ParityError, type CloseOptions, type Comparable, type ParityFailure } from './assert-close.ts';
export { gradcheck, GradcheckError, type GradcheckOptions } from './gradcheck.ts';
