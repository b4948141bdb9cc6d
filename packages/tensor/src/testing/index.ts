/** Parity testing: tolerant comparison and finite-difference gradient checks. */
export { assertClose, ParityError, type CloseOptions, type Comparable } from './assert-close.ts';
export { gradcheck, GradcheckError, type GradcheckOptions } from './gradcheck.ts';
