/**
 * A rank program loaded as untrusted code that walks everything it can reach
 * from the global object, the packages it may import and the objects Node's
 * globals hand out, and lists what is mutable (test/confined.test.ts): an
 * object that is not frozen, a Map, Set, WeakMap or WeakSet (frozen or not,
 * their entries can change), and memory (an ArrayBuffer or a view with
 * bytes). Whatever two launches on one worker can both reach and change
 * would carry something from one to the next. The walk follows what harden
 * follows: own properties, prototypes, and getters of plain objects.
 */
import type { Comm } from '@dtlab/runtime';

// The packages' exports as require returns them: an `import * as` would walk the compiler's namespace
// object, made by this module, instead.
// @ts-ignore -- a module has `arguments` once compiled to CommonJS; its second is `require`
const requireHere = arguments[1] as (id: string) => unknown;

function isPrototypeObject(x: object): boolean {
  const d = Reflect.getOwnPropertyDescriptor(x, 'constructor');
  return d !== undefined && 'value' in d && typeof d.value === 'function' && (d.value as { prototype?: unknown }).prototype === x;
}

/**
 * 'Map', 'Set', 'WeakMap' or 'WeakSet' if `x` is one (by its internal slots, which Node's own
 * collections, not instances of the global classes, have too), else null.
 */
function collection(x: object): string | null {
  const brands: [string, (this: never, k: never) => unknown][] = [
    ['Map', Map.prototype.has as never],
    ['Set', Set.prototype.has as never],
    ['WeakMap', WeakMap.prototype.has as never],
    ['WeakSet', WeakSet.prototype.has as never],
  ];
  for (const [name, has] of brands) {
    try {
      Reflect.apply(has, x, [{}]);
      return name;
    } catch {
      // not this kind
    }
  }
  return null;
}

/**
 * The util.inspect that Buffer's own custom inspect method, called directly,
 * hands to the custom inspect function of a value kept on the buffer (the
 * way a fourth review found to the thread's own util.inspect); undefined if
 * none was handed out.
 */
export function inspectViaBuffer(): unknown {
  const custom = Symbol.for('nodejs.util.inspect.custom');
  let got: unknown;
  const buf = Buffer.alloc(1) as unknown as Record<PropertyKey, unknown>;
  buf['extra'] = { [custom]: (_depth: unknown, _options: unknown, inspect: unknown) => ((got = inspect), '') };
  (buf[custom] as (depth: number, ctx: object) => string).call(buf, 2, { customInspect: true, depth: 2 });
  return got;
}

/** Where each mutable thing reachable from the roots is (a path from a root), at most `limit` of them. */
export function mutableReach(comm: Comm, limit = 50): string[] {
  const timeout = setTimeout(() => undefined, 0);
  const immediate = setImmediate(() => undefined);
  clearTimeout(timeout);
  clearImmediate(immediate);
  const roots: [string, unknown][] = [
    ['globalThis', globalThis],
    ['@dtlab/tensor', requireHere('@dtlab/tensor')],
    ['@dtlab/runtime', requireHere('@dtlab/runtime')],
    ['comm prototype', Object.getPrototypeOf(comm)],
    ['a Timeout', timeout],
    ['an Immediate', immediate],
    ['an iterator of URLSearchParams', new URLSearchParams('a=1').entries()],
    ['performance.nodeTiming', performance.nodeTiming],
    ['an async function', async () => undefined],
    ['a generator', function* () {}],
    ['an async generator', async function* () {}],
    ['Intl segments', new Intl.Segmenter().segment('a')],
  ];
  const segmentIterator = (roots[11]![1] as Iterable<unknown>)[Symbol.iterator]();
  roots.push(['an Intl segment iterator', segmentIterator]);
  const inspect = inspectViaBuffer();
  roots.push(['util.inspect, as Buffer hands it out', inspect]);
  const found: string[] = [];
  // A root that is not there checks nothing: say so.
  if (typeof inspect !== 'function') found.push(`util.inspect, as Buffer hands it out: not handed out (got ${typeof inspect}); the probe needs mending`);
  const seen = new Set<unknown>();
  const stack: [string, unknown][] = [...roots].reverse();
  // The roots made here for the walk are this launch's own; what they lead to is not.
  const own = new Set<unknown>([timeout, immediate, roots[6]![1], roots[8]![1], roots[9]![1], roots[10]![1], roots[11]![1], segmentIterator]);
  for (const f of [roots[9]![1], roots[10]![1]]) own.add((f as { prototype: unknown }).prototype);
  while (stack.length > 0 && found.length < limit) {
    const [where, x] = stack.pop()!;
    if (x === null || (typeof x !== 'object' && typeof x !== 'function') || seen.has(x)) continue;
    seen.add(x);
    if (!own.has(x)) {
      if (ArrayBuffer.isView(x) ? x.byteLength > 0 : x instanceof ArrayBuffer || x instanceof SharedArrayBuffer ? x.byteLength > 0 : false) found.push(`${where}: memory`);
      else if (collection(x)) found.push(`${where}: ${collection(x)}`);
      else if (!ArrayBuffer.isView(x) && !Object.isFrozen(x)) {
        const open = Reflect.ownKeys(x).filter((k) => {
          const d = Reflect.getOwnPropertyDescriptor(x, k)!;
          return d.configurable || d.writable === true;
        });
        found.push(`${where}: not frozen (${Object.isExtensible(x) ? 'extensible; ' : ''}${open.map(String).join(', ') || 'no open property'})`);
      }
    }
    stack.push([`${where}.[[Prototype]]`, Object.getPrototypeOf(x)]);
    // Getters are called on plain objects, and on the global object (`performance` is a getter there).
    const plain = ((Object.getPrototypeOf(x) === null || Object.getPrototypeOf(x) === Object.prototype) && !isPrototypeObject(x)) || x === globalThis;
    for (const key of Reflect.ownKeys(x)) {
      const d = Reflect.getOwnPropertyDescriptor(x, key);
      if (!d) continue;
      const at = `${where}.${String(key)}`;
      if ('value' in d) stack.push([at, d.value]);
      else {
        stack.push([`${at} (getter)`, d.get], [`${at} (setter)`, d.set]);
        if (plain && d.get) {
          try {
            stack.push([at, d.get.call(x)]);
          } catch {
            // a getter that throws hands out nothing
          }
        }
      }
    }
  }
  return found;
}
