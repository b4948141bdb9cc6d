/**
 * The wait-for graph behind deadlock reports: an edge r -> s when rank r
 * waits for something only rank s can provide. A deadlock among live ranks
 * shows up as a cycle; a wait on a finished rank shows up as a dead end.
 */

/** Finds a cycle in the graph `edges` (rank -> ranks it waits for), or returns []. */
export function findCycle(edges: ReadonlyMap<number, readonly number[]>): number[] {
  const state = new Map<number, 'open' | 'closed'>();
  const path: number[] = [];
  const visit = (r: number): number[] | null => {
    state.set(r, 'open');
    path.push(r);
    for (const s of edges.get(r) ?? []) {
      if (state.get(s) === 'open') return path.slice(path.indexOf(s));
      if (!state.has(s)) {
        const c = visit(s);
        if (c) return c;
      }
    }
    path.pop();
    state.set(r, 'closed');
    return null;
  };
  for (const r of [...edges.keys()].sort((a, b) => a - b)) {
    if (!state.has(r)) {
      const c = visit(r);
      if (c) return c;
    }
  }
  return [];
}
