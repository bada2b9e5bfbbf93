import { describe, expect, it } from 'vitest';
import { hostHeaderProblem } from '../src/http/hostHeader.js';

const http11 = (rawHeaders: string[]) => ({ rawHeaders, httpVersionMajor: 1, httpVersionMinor: 1 });

describe('hostHeaderProblem', () => {
  it('finds a second Host line in any case, wherever it is', () => {
    expect(hostHeaderProblem(http11(['Host', 'a.example', 'Accept', '*/*', 'host', 'b.example']))).toBe('it has more than one Host header');
    expect(hostHeaderProblem(http11(['HOST', 'a.example', 'hOsT', 'a.example']))).toBe('it has more than one Host header');
    expect(hostHeaderProblem({ ...http11(['Host', 'a', 'Host', 'b']), httpVersionMinor: 0 })).toBe('it has more than one Host header');
  });

  it('finds a missing Host in HTTP/1.1, not in HTTP/1.0', () => {
    expect(hostHeaderProblem(http11(['Accept', 'host', 'X-Host', 'a.example']))).toBe('it has no Host header');
    expect(hostHeaderProblem(http11([]))).toBe('it has no Host header');
    expect(hostHeaderProblem({ rawHeaders: [], httpVersionMajor: 1, httpVersionMinor: 0 })).toBeUndefined();
  });

  it('lets exactly one Host line through', () => {
    expect(hostHeaderProblem(http11(['Host', 'a.example', 'X-Host', 'b.example', 'Hosts', 'c']))).toBeUndefined();
    expect(hostHeaderProblem(http11(['hoST', 'a.example']))).toBeUndefined();
  });
});
