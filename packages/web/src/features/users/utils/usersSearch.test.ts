import { describe, expect, it } from 'vitest';
import { parsePage, readUsersQuery, usersQueryValues } from './usersSearch';

describe('readUsersQuery', () => {
  it('reads the search, the status and the page', () => {
    expect(readUsersQuery(new URLSearchParams('query=%20bob%20&status=suspended&page=3'))).toEqual({
      query: 'bob',
      status: 'suspended',
      page: 3,
      pageSize: 50,
    });
  });

  it('ignores what it does not understand', () => {
    expect(readUsersQuery(new URLSearchParams('status=deleted&page=-2'))).toEqual({ query: '', status: '', page: 1, pageSize: 50 });
    expect(parsePage('0')).toBe(1);
    expect(parsePage('1e3')).toBe(1);
    expect(parsePage('12')).toBe(12);
  });
});

describe('usersQueryValues', () => {
  it('leaves the defaults out of the address', () => {
    expect(usersQueryValues({ query: '', status: '', page: 1 })).toEqual({ query: undefined, status: undefined, page: undefined });
    expect(usersQueryValues({ query: 'bob', status: 'active', page: 2 })).toEqual({ query: 'bob', status: 'active', page: '2' });
  });
});
