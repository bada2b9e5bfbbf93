import { describe, expect, it } from 'vitest';
import { toAppLink } from './appLink';

describe('toAppLink', () => {
  it('links to the app and names its host', () => {
    expect(toAppLink({ id: 'whoami', name: 'Whoami', url: 'http://whoami.localhost:4180/' })).toEqual({
      id: 'whoami',
      name: 'Whoami',
      href: 'http://whoami.localhost:4180/',
      host: 'whoami.localhost:4180',
    });
    expect(toAppLink({ id: 'wiki', name: 'Wiki', url: 'https://wiki.example.com/start?x=1' })).toMatchObject({
      href: 'https://wiki.example.com/start?x=1',
      host: 'wiki.example.com',
    });
  });

  it.each([
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a data: URL', 'data:text/html,hi'],
    ['a relative path', '/somewhere'],
    ['not a URL', 'whoami'],
  ])('drops an app whose URL is %s', (_label, url) => {
    expect(toAppLink({ id: 'x', name: 'X', url })).toBeUndefined();
  });

  it('drops an app without a name', () => {
    expect(toAppLink({ id: 'x', name: '', url: 'https://x.example/' })).toBeUndefined();
  });
});
