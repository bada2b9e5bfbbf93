import { describe, expect, it } from 'vitest';
import { keepTickObjectShape } from '../src/http/tickObjectShape.js';

describe('keepTickObjectShape', () => {
  it("holds one of nextTick's own queue entries, the same one on every call", () => {
    const held = keepTickObjectShape() as { callback?: unknown };
    // A queue entry is what Node's tick queue runs: it carries the callback (internal/process/task_queues).
    expect(typeof held.callback).toBe('function');
    expect(Object.getOwnPropertySymbols(held).map(String)).toEqual(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']);
    expect(keepTickObjectShape()).toBe(held);
  });
});
