/** A file on disk that is not among the compiled modules: untrusted code must not load it. */
export const outside = true;
