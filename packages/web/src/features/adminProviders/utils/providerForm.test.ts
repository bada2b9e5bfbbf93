import type { AdminProvider } from '@gatehouse/contract';
import { describe, expect, it } from 'vitest';
import { emptyProviderForm, formToProvider, providerToForm, redirectUriFor, slugFromName, splitList, suggestedScopes } from './providerForm';
import { validationProblems } from '../../../lib/validationProblems';

const filled = { ...emptyProviderForm(), id: 'corp', name: 'Corp SSO', issuer: 'https://sso.corp.example', clientId: 'gatehouse', clientSecret: 's3cret' };

describe('provider form', () => {
  it('turns what was typed into a definition', () => {
    const { definition, problems } = formToProvider({
      ...filled,
      scopes: 'openid, email  profile groups',
      allowedDomains: 'Corp.example,\n partner.example, corp.example',
      authorizationParams: 'prompt=select_account\nhd = corp.example',
    });
    expect(problems).toEqual([]);
    expect(definition).toMatchObject({
      id: 'corp',
      clientSecret: 's3cret',
      scopes: ['openid', 'email', 'profile', 'groups'],
      allowedDomains: ['corp.example', 'partner.example'],
      authorizationParams: { prompt: 'select_account', hd: 'corp.example' },
      enabled: true,
    });
  });

  it('names what is missing or wrong before asking the server', () => {
    const { problems } = formToProvider({ ...emptyProviderForm(), id: 'Corp SSO', scopes: 'email', authorizationParams: 'nonsense' });
    expect(problems).toEqual([
      'id: must be lowercase letters, digits and dashes (at most 63)',
      'name: is required',
      'issuer: is required',
      'clientId: is required',
      'clientSecret: is required',
      'scopes: must include "openid"',
      'authorizationParams: "nonsense" is not name=value',
    ]);
  });

  it('on edit, an empty credential means "keep the stored one" and is left out', () => {
    const stored = { hasClientSecret: true, hasPrivateKey: false };
    const { definition, problems } = formToProvider({ ...filled, clientSecret: '' }, stored);
    expect(problems).toEqual([]);
    expect(definition).not.toHaveProperty('clientSecret');
    expect(definition).not.toHaveProperty('enabled');
    // Switching to a private key needs one unless one is stored.
    expect(formToProvider({ ...filled, clientAuthMethod: 'private_key_jwt' }, stored).problems).toEqual(['privateKey: is required for private_key_jwt']);
    expect(formToProvider({ ...filled, clientAuthMethod: 'private_key_jwt', privateKey: '{"kty":' }, stored).problems[0]).toMatch(/^privateKey: must be a JWK/);
    const withKey = formToProvider({ ...filled, clientAuthMethod: 'private_key_jwt', privateKey: '{"kty":"EC","d":"x"}' }, stored).definition;
    expect(withKey).toMatchObject({ privateKey: { kty: 'EC', d: 'x' } });
    expect(withKey).not.toHaveProperty('clientSecret');
  });

  it('reads a provider back into the form without any credential', () => {
    const provider = {
      id: 'corp',
      name: 'Corp',
      kind: 'oidc',
      issuer: 'https://sso.corp.example',
      clientId: 'g',
      clientAuthMethod: 'client_secret_basic',
      scopes: ['openid', 'email'],
      claims: { email: 'mail', emailVerified: 'email_verified', name: 'name', picture: 'picture', groups: 'roles' },
      allowedDomains: ['corp.example'],
      createUsers: true,
      trustEmail: false,
      assumeEmailVerified: false,
      trustGroups: true,
      groupPrefix: 'corp:',
      pushedAuthorizationRequests: 'auto',
      authorizationParams: { prompt: 'login' },
      enabled: false,
      source: 'console',
      discovery: { status: 'ready', error: null, checkedAt: null },
      redirectUri: 'https://auth.example.com/.gatehouse/callback/corp',
      backchannelLogoutUri: 'https://auth.example.com/.gatehouse/backchannel-logout/corp',
      hasClientSecret: true,
      hasPrivateKey: false,
      linkedIdentities: 0,
      options: {},
    } satisfies AdminProvider;
    expect(providerToForm(provider)).toMatchObject({ clientSecret: '', privateKey: '', scopes: 'openid email', allowedDomains: 'corp.example', authorizationParams: 'prompt=login', claims: { email: 'mail', groups: 'roles' }, trustGroups: true, groupPrefix: 'corp:' });
    expect(providerToForm({ ...provider, trustGroups: false, groupPrefix: null })).toMatchObject({ trustGroups: false, groupPrefix: '' });
  });

  // Threat: a contractor's IdP asserting `admins` counting as the organisation's own `admins` group.
  it("leaves a new provider's groups untrusted, and sends a group prefix only when one is typed", () => {
    expect(emptyProviderForm()).toMatchObject({ trustGroups: false, groupPrefix: '' });
    const plain = formToProvider(filled).definition;
    expect(plain.trustGroups).toBe(false);
    expect(plain).not.toHaveProperty('groupPrefix');
    expect(formToProvider({ ...filled, trustGroups: true, groupPrefix: ' partner: ' }).definition).toMatchObject({ trustGroups: true, groupPrefix: 'partner:' });
    for (const bad of ['partner', ':', 'a b:', 'a,b:', 'é:']) {
      expect(formToProvider({ ...filled, groupPrefix: bad }).problems, bad).toEqual([expect.stringMatching(/^groupPrefix: must be/)]);
    }
  });

  it('suggests an id, scopes and the redirect URI', () => {
    expect(slugFromName('Corp SSO (EU)')).toBe('corp-sso-eu');
    expect(slugFromName('  Ünïcode  IdP ')).toBe('unicode-idp');
    expect(suggestedScopes({ scopesSupported: ['openid', 'email', 'groups', 'offline_access', 'phone'] })).toBe('openid email profile groups offline_access');
    expect(suggestedScopes({ scopesSupported: [] })).toBe('openid email profile');
    expect(redirectUriFor('https://auth.example.com', 'corp')).toBe('https://auth.example.com/.gatehouse/callback/corp');
    expect(redirectUriFor('https://auth.example.com', '')).toBe('https://auth.example.com/.gatehouse/callback/%3Cid%3E');
    expect(splitList('a, b\n\nb ,c')).toEqual(['a', 'b', 'c']);
  });

  it('lists the server’s validation problems one by one', () => {
    expect(validationProblems('The request could not be understood: issuer: must be https; clientSecret: is required.')).toEqual(['issuer: must be https', 'clientSecret: is required']);
  });
});
