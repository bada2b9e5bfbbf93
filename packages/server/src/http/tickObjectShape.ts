import { createHook } from 'node:async_hooks';

let held: object | undefined;

/**
 * Keeps one of Node's own `process.nextTick` queue entries alive for the life of the process, so that the
 * hidden classes ("maps") V8 builds for those entries are never collected.
 *
 * Why: Node makes each entry with an object literal that has computed keys
 * (`{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`, internal/process/task_queues;
 * Node 24 adds a third symbol, the entry's async context frame), and V8 holds the maps of such a literal
 * only weakly. When a major garbage collection runs while no
 * entry is queued — something that happens at start-up, when the heap grows while modules load — the maps
 * die and the next entries get new ones. `nextTick`'s inline caches then have seen several maps for the
 * same literal, and the optimised code defines each computed property through a runtime call instead of
 * a store. Every HTTP request makes several ticks (ending the request stream, finishing the write, closing
 * the response), so a process that lands in that state answers each request about 3 µs more slowly: 25 %
 * of a forward-auth check. Whether a process lands there depends on when collections happen, so it varied
 * from one start to the next (bench/README.md, "Two kinds of process"). One live entry keeps its map
 * and, through the transition chain, all the maps before it.
 *
 * The async hook is how Node hands out a queue entry (its `init` callback receives it); it is enabled for
 * this one synchronous `nextTick` and disabled at once, so no hook runs afterwards. Idempotent.
 */
export function keepTickObjectShape(): object {
  if (held) return held;
  let captured: object | undefined;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && !captured) captured = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
  if (!captured) throw new Error('process.nextTick did not report its queue entry to the async hook');
  held = captured;
  return held;
}

function noop(): void {}
