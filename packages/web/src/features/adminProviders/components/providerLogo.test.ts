import { describe, expect, it } from 'vitest';
import { siGithub, siGoogle, siOpenid } from 'simple-icons';
import { providerLogo } from './ProviderLogo';

describe('a kind of provider’s logo', () => {
  it.each(['oidc', 'google', 'okta', 'keycloak', 'auth0', 'gitlab', 'github'])('%s has its brand’s mark', (kind) => {
    expect(providerLogo(kind).source).toBe('simple-icons');
  });

  it('each mark is its own brand’s', () => {
    expect(providerLogo('google')).toEqual({ source: 'simple-icons', icon: siGoogle });
    expect(providerLogo('github')).toEqual({ source: 'simple-icons', icon: siGithub });
    expect(providerLogo('oidc')).toEqual({ source: 'simple-icons', icon: siOpenid });
  });

  it('Entra ID has Microsoft’s panes, which Simple Icons does not carry', () => {
    expect(providerLogo('entra')).toEqual({ source: 'microsoft' });
  });

  it.each(['saml', '', 'constructor', '__proto__', 'toString'])('a kind it does not know (%j) gets the neutral key', (kind) => {
    expect(providerLogo(kind)).toEqual({ source: 'fallback' });
  });
});
