import { describe, expect, it } from 'vitest';
import { nextRestartDelay, RESTART_MAX_MS, RESTART_MIN_MS, STABLE_AFTER_MS } from '../src/devServices.js';

describe('development services: restart backoff', () => {
  it('waits 1 s after the first crash, doubling while the child keeps crashing, up to 30 s', () => {
    let delay: number | undefined;
    const delays: number[] = [];
    for (let crash = 0; crash < 7; crash += 1) {
      delay = nextRestartDelay(delay, 500);
      delays.push(delay);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(RESTART_MIN_MS).toBe(1_000);
    expect(RESTART_MAX_MS).toBe(30_000);
  });

  it('starts over at 1 s once the child stayed up long enough', () => {
    expect(nextRestartDelay(16_000, STABLE_AFTER_MS)).toBe(RESTART_MIN_MS);
    expect(nextRestartDelay(16_000, STABLE_AFTER_MS - 1)).toBe(30_000);
  });
});
