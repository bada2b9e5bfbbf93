import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configSourceLabel, entryAsYaml } from './configSource';

describe('configSourceLabel', () => {
  it('names the file the server read, or the built-in defaults', () => {
    expect(configSourceLabel('/etc/gatehouse/gatehouse.yaml')).toEqual({ badge: 'From gatehouse.yaml', title: 'Defined in /etc/gatehouse/gatehouse.yaml' });
    expect(configSourceLabel('conf/site.yml')).toEqual({ badge: 'From site.yml', title: 'Defined in conf/site.yml' });
    expect(configSourceLabel(null)).toEqual({ badge: 'Built-in default', title: 'Built-in development default' });
  });
});

describe('entryAsYaml', () => {
  it('writes an entry under its list, as in the file, leaving out what is empty', () => {
    const text = entryAsYaml('apps', { id: 'whoami', name: 'Whoami: demo', publicPaths: [], policy: { allow: [{ groups: ['staff'] }], deny: [] }, websockets: true, note: null });
    expect(text.startsWith('apps:\n  - id: whoami\n')).toBe(true);
    // Read back, it is the same entry (quoting where YAML needs it).
    expect(parse(text)).toEqual({ apps: [{ id: 'whoami', name: 'Whoami: demo', policy: { allow: [{ groups: ['staff'] }], deny: [] }, websockets: true }] });
  });
});
