import { describe, expect, it } from 'vitest';
import { hasRepeatedHost } from '../src/http/hostHeader.js';

describe('hasRepeatedHost', () => {
  it('finds a second Host line in any case, wherever it is', () => {
    expect(hasRepeatedHost(['Host', 'a.example', 'Accept', '*/*', 'host', 'b.example'])).toBe(true);
    expect(hasRepeatedHost(['HOST', 'a.example', 'hOsT', 'a.example'])).toBe(true);
  });

  it('lets one Host line, or none, through', () => {
    expect(hasRepeatedHost(['Host', 'a.example', 'X-Host', 'b.example', 'Hosts', 'c'])).toBe(false);
    expect(hasRepeatedHost(['Accept', 'host'])).toBe(false);
    expect(hasRepeatedHost([])).toBe(false);
  });
});
