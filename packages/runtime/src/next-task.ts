/**
 * "Run this in a task of its own": what the inline backend and the delivery
 * queue use to start each rank's next stretch of code from a fresh job.
 *
 * Node has `setImmediate`; a browser does not, and its `setTimeout(fn, 0)`
 * is clamped to 4 ms once timers nest, which would make a run of a thousand
 * deliveries take seconds. A `MessageChannel` message is a task that is not
 * clamped, and messages on one port run in the order they were posted, as
 * `setImmediate` callbacks do; so both hosts run the same callbacks in the
 * same order, each after the microtasks of the task that scheduled it.
 */

/** Schedules `fn` to run in a new task, after every task scheduled before it this way. */
export const nextTask: (fn: () => void) => void = typeof setImmediate === 'function' ? (fn) => void setImmediate(fn) : channelTasks();

/** A FIFO of callbacks, each run in a task of its own through one MessageChannel (exported for its test). */
export function channelTasks(): (fn: () => void) => void {
  const queue: (() => void)[] = [];
  const channel = new MessageChannel();
  // Typed as the browser's port (Node's typings describe worker_threads' own): setting onmessage also starts it.
  (channel.port1 as unknown as { onmessage: (() => void) | null }).onmessage = () => queue.shift()!();
  return (fn) => {
    queue.push(fn);
    channel.port2.postMessage(null);
  };
}
