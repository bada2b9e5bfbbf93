import { describe, expect, it } from 'vitest';
import { paths } from './paths';

describe('paths.signIn.getHref', () => {
  it('carries the return-to, readable and still encoded where it must be', () => {
    expect(paths.signIn.getHref()).toBe('/sign-in');
    expect(paths.signIn.getHref('/account')).toBe('/sign-in?rd=/account');
    expect(paths.signIn.getHref('/admin/users?q=a&b=c d')).toBe('/sign-in?rd=/admin/users%3Fq%3Da%26b%3Dc%20d');
    expect(new URL(paths.signIn.getHref('/x?y=1&z=2'), 'https://h').searchParams.get('rd')).toBe('/x?y=1&z=2');
  });
});
