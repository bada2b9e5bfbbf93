import type { AdminProvider, ProviderPreset } from '@gatehouse/contract';
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
    // What only the form can tell first, then the provider schema's own words (the server's).
    expect(problems).toEqual([
      'name: is required',
      'issuer: is required',
      'clientId: is required',
      'clientSecret: is required',
      'authorizationParams: "nonsense" is not name=value',
      'id: must be lowercase letters, digits and dashes (at most 63)',
    ]);
    // A rule across fields is the schema's too, judged once the fields themselves are right (as on the server).
    expect(formToProvider({ ...filled, scopes: 'email' }).problems).toEqual(['scopes: must include "openid"']);
  });

  // The same schema as gatehouse.yaml: a kind's own rules hold in the form before anything is sent.
  it("refuses what the provider's kind refuses, in the server's words", () => {
    const google = { kind: 'google', fields: [{ name: 'hostedDomains', label: 'Domains', help: '', input: 'list', required: false, placeholder: null, default: null }] } as const;
    const values = { ...filled, kind: 'google', issuer: '', trustEmail: true, options: { hostedDomains: '' } };
    expect(formToProvider(values, undefined, { ...google, fields: [...google.fields] }).problems).toEqual([expect.stringMatching(/^trustEmail: needs hostedDomains/)]);
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
      trustClaims: true,
      groupPrefix: 'corp:',
      pushedAuthorizationRequests: 'auto',
      authorizationParams: { prompt: 'login' },
      enabled: false,
      source: 'console',
      discovery: { status: 'ready', error: null, checkedAt: null },
      publication: { state: 'published', how: null, at: null },
      redirectUri: 'https://auth.example.com/.gatehouse/callback/corp',
      backchannelLogoutUri: 'https://auth.example.com/.gatehouse/backchannel-logout/corp',
      hasClientSecret: true,
      hasPrivateKey: false,
      linkedIdentities: 0,
      warnings: [],
      options: {},
    } satisfies AdminProvider;
    expect(providerToForm(provider)).toMatchObject({ clientSecret: '', privateKey: '', scopes: 'openid email', allowedDomains: 'corp.example', authorizationParams: 'prompt=login', claims: { email: 'mail', groups: 'roles' }, trustGroups: true, groupPrefix: 'corp:' });
    expect(providerToForm({ ...provider, trustGroups: false, groupPrefix: undefined })).toMatchObject({ trustGroups: false, groupPrefix: '' });
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
    expect(redirectUriFor('https://auth.example.com', '')).toBe('https://auth.example.com/.gatehouse/callback/<id>');
    expect(splitList('a, b\n\nb ,c')).toEqual(['a', 'b', 'c']);
  });

  it('lists the server’s validation problems one by one', () => {
    expect(validationProblems('The request could not be understood: issuer: must be https; clientSecret: is required.')).toEqual(['issuer: must be https', 'clientSecret: is required']);
  });
});

describe('a form started from a preset', () => {
  const google: ProviderPreset = {
    kind: 'google',
    protocol: 'oidc',
    label: 'Google',
    description: 'Google accounts',
    docs: 'docs/providers/google.md',
    fields: [{ name: 'hostedDomains', label: 'Google Workspace domains', help: 'hd', input: 'list', required: false, placeholder: 'example.com', default: null }],
    defaults: { scopes: ['openid', 'email', 'profile'], claims: { email: 'email', emailVerified: 'email_verified', name: 'name', picture: 'picture', groups: 'groups' }, groupPrefix: null },
    redirectUriPattern: 'https://auth.example.com/.gatehouse/callback/{id}',
  };
  const entra: ProviderPreset = {
    ...google,
    kind: 'entra',
    label: 'Microsoft Entra ID',
    fields: [
      { name: 'tenant', label: 'Tenant', help: 't', input: 'text', required: true, placeholder: null, default: null },
      { name: 'allowAnyTenant', label: 'Admit any tenant', help: 'a', input: 'boolean', required: false, placeholder: null, default: false },
    ],
  };
  const github: ProviderPreset = {
    ...google,
    kind: 'github',
    protocol: 'oauth2',
    label: 'GitHub',
    fields: [{ name: 'baseUrl', label: 'GitHub Enterprise Server URL', help: 'b', input: 'url', required: false, placeholder: null, default: null }],
    defaults: { scopes: ['read:user', 'user:email', 'read:org'], claims: null, groupPrefix: 'github:' },
  };
  const credentials = { clientId: 'c', clientSecret: 's' };

  // GitHub's configuration refuses what only OpenID Connect has: the form must not send it.
  it('sends no claim mapping, PAR mode or openid requirement for a kind that is not OpenID Connect', () => {
    const { definition, problems } = formToProvider({ ...emptyProviderForm(github), ...credentials }, undefined, github);
    expect(problems).toEqual([]);
    expect(definition).toMatchObject({ kind: 'github', id: 'github', scopes: ['read:user', 'user:email', 'read:org'] });
    expect(definition).not.toHaveProperty('claims');
    expect(definition).not.toHaveProperty('pushedAuthorizationRequests');
    expect(definition).not.toHaveProperty('issuer');
  });

  it('starts named after the preset, with its defaults, and sends its kind and its own fields', () => {
    const values = emptyProviderForm(google);
    expect(values).toMatchObject({ kind: 'google', name: 'Google', id: 'google', scopes: 'openid email profile', options: { hostedDomains: '' } });
    const { definition, problems } = formToProvider({ ...values, ...credentials, options: { hostedDomains: 'Example.com, corp.example\ncorp.example' } }, undefined, google);
    expect(problems).toEqual([]);
    expect(definition).toMatchObject({ kind: 'google', id: 'google', hostedDomains: ['Example.com', 'corp.example'] });
    // A preset's issuer is its own: none is sent unless one is typed (a loopback stand-in).
    expect(definition).not.toHaveProperty('issuer');
  });

  it('asks for a preset’s required fields, and sends a switch as a boolean', () => {
    const values = { ...emptyProviderForm(entra), ...credentials };
    expect(formToProvider(values, undefined, entra).problems).toEqual(['tenant: is required']);
    const { definition } = formToProvider({ ...values, options: { tenant: ' organizations ', allowAnyTenant: true } }, undefined, entra);
    expect(definition).toMatchObject({ kind: 'entra', tenant: 'organizations', allowAnyTenant: true });
  });

  it('the generic kind still needs its issuer, and is sent without a kind', () => {
    const { definition, problems } = formToProvider({ ...emptyProviderForm(), ...credentials, id: 'corp', name: 'Corp' });
    expect(problems).toEqual(['issuer: is required']);
    expect(definition).not.toHaveProperty('kind');
  });

  it('editing keeps the kind and reads its own fields back', () => {
    const form = providerToForm({ ...adminProvider(), kind: 'google', options: { hostedDomains: ['example.com', 'corp.example'] } }, google);
    expect(form).toMatchObject({ kind: 'google', options: { hostedDomains: 'example.com, corp.example' } });
    expect(formToProvider(form, { hasClientSecret: true, hasPrivateKey: false }, google).definition).toMatchObject({ kind: 'google', hostedDomains: ['example.com', 'corp.example'] });
  });
});

function adminProvider(): AdminProvider {
  return {
    id: 'google',
    name: 'Google',
    kind: 'oidc',
    options: {},
    issuer: 'https://accounts.google.com',
    clientId: 'g',
    clientAuthMethod: 'client_secret_basic',
    scopes: ['openid', 'email', 'profile'],
    claims: { email: 'email', emailVerified: 'email_verified', name: 'name', picture: 'picture', groups: 'groups' },
    allowedDomains: [],
    createUsers: true,
    trustEmail: false,
    assumeEmailVerified: false,
    trustGroups: false,
    trustClaims: false,
    pushedAuthorizationRequests: 'auto',
    authorizationParams: {},
    enabled: true,
    source: 'console',
    discovery: { status: 'ready', error: null, checkedAt: null },
    publication: { state: 'published', how: null, at: null },
    redirectUri: 'https://auth.example.com/.gatehouse/callback/google',
    backchannelLogoutUri: 'https://auth.example.com/.gatehouse/backchannel-logout/google',
    hasClientSecret: true,
    hasPrivateKey: false,
    linkedIdentities: 0,
    warnings: [],
  };
}
