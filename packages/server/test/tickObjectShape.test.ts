import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { keepTickObjectShape } from '../src/http/tickObjectShape.js';

const source = fileURLToPath(new URL('../src/http/tickObjectShape.ts', import.meta.url));

/**
 * What keepTickObjectShape is for, asked of V8 itself in a quiet process of its own: after a major
 * collection with no entry queued (the moment the entries' hidden classes would die), the entry
 * nextTick's queue runs next still has the held entry's hidden class. The running entry comes from
 * `executionAsyncResource()` inside a tick callback (the object the queue is running), not from the
 * async hook keepTickObjectShape reads, and it is compared by class (`%HaveSameMap`, with
 * --allow-natives-syntax), not by the keys one Node version happens to put on it. `lookalike` checks
 * the comparison itself: the same keys, set in another order, make another class.
 */
const probe = `
const { keepTickObjectShape } = await import(process.argv[1]);
const { executionAsyncResource } = await import('node:async_hooks');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
const runningEntry = () => new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));

const held = keepTickObjectShape();
await new Promise((resolve) => setTimeout(resolve, 10));
gc();
gc();
const running = await runningEntry();
const lookalike = { callback: running.callback, args: running.args };
for (const symbol of Object.getOwnPropertySymbols(running)) lookalike[symbol] = running[symbol];
console.log(JSON.stringify({ sameClass: haveSameMap(held, running), lookalikeSameClass: haveSameMap(running, lookalike) }));
`;

describe('keepTickObjectShape', () => {
  it("keeps the hidden class of nextTick's queue entries through a major collection", () => {
    const output = execFileSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--import', 'tsx', '--input-type=module', '-e', probe, source], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(JSON.parse(output)).toEqual({ sameClass: true, lookalikeSameClass: false });
  });

  it('holds one queue entry, the same one on every call', () => {
    const held = keepTickObjectShape() as { callback?: unknown };
    // A queue entry is what Node's tick queue runs: it carries the callback.
    expect(typeof held.callback).toBe('function');
    expect(keepTickObjectShape()).toBe(held);
  });
});
