import { describe, expect, it } from 'vitest';
import { guideLink, guideName, loadGuide } from './providerGuides';

describe('the providers’ setup guides in the console', () => {
  it('names a guide for each page of docs/providers a preset points to', () => {
    for (const kind of ['google', 'entra', 'okta', 'keycloak', 'auth0', 'gitlab', 'github']) {
      expect(guideName(`docs/providers/${kind}.md`)).toBe(kind);
    }
    expect(guideName('docs/providers/README.md')).toBe('overview');
    expect(guideName('docs/providers/google.md#gatehouse-yaml')).toBe('google');
  });

  it('has no guide for other pages or names', () => {
    expect(guideName('docs/configuration.md')).toBeUndefined();
    expect(guideName('docs/providers/nothing.md')).toBeUndefined();
    expect(guideName('https://example.com/google.md')).toBeUndefined();
  });

  it('loads the guide’s own text from docs/providers', async () => {
    expect(await loadGuide('google')).toMatch(/^# Google \(`kind: google`\)/);
    expect(await loadGuide('overview')).toMatch(/^# Identity providers/);
  });

  it('loads nothing for a name that is not a guide, a path or a prototype key included', async () => {
    for (const name of ['nothing', '../README', 'README', '../../configuration', 'constructor', '__proto__', '']) {
      expect(await loadGuide(name)).toBeUndefined();
    }
  });

  it('leads links between guides to the console, web addresses to the web, other docs to their path', () => {
    expect(guideLink('google.md')).toEqual({ kind: 'guide', name: 'google', hash: '' });
    expect(guideLink('README.md#top')).toEqual({ kind: 'guide', name: 'overview', hash: '#top' });
    expect(guideLink('../configuration.md#appspassaccesstoken')).toEqual({ kind: 'docs', path: 'docs/configuration.md#appspassaccesstoken' });
    expect(guideLink('https://learn.microsoft.com/entra/')).toEqual({ kind: 'web', href: 'https://learn.microsoft.com/entra/' });
    // Threat: a script URL in a page of the docs never becomes a link.
    expect(guideLink('javascript:alert(1)')).toEqual({ kind: 'docs', path: expect.any(String) });
  });
});
