import { describe, expect, it } from 'vitest';
import { ClientAuthLimit } from '../../src/provide/clientAuthLimit.js';

describe('the limit on failed client authentications', () => {
  it('refuses an address past its failures until the window ends, and only that address', () => {
    // Threat: guessing a client secret at the token endpoint, one guess after another.
    let now = 1_000_000;
    const limit = new ClientAuthLimit(3, 60_000, () => now);
    for (let i = 0; i < 2; i++) limit.failed('192.0.2.1');
    expect(limit.blocked('192.0.2.1')).toBeUndefined();
    limit.failed('192.0.2.1');
    expect(limit.blocked('192.0.2.1')).toBe(60);
    expect(limit.blocked('192.0.2.2')).toBeUndefined();
    now += 30_000;
    expect(limit.blocked('192.0.2.1')).toBe(30);
    now += 30_000;
    expect(limit.blocked('192.0.2.1')).toBeUndefined();
    // A new window counts from nothing.
    limit.failed('192.0.2.1');
    expect(limit.blocked('192.0.2.1')).toBeUndefined();
  });
});
