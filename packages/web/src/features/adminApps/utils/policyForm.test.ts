import type { AdminApp } from '@gatehouse/contract';
import { describe, expect, it } from 'vitest';
import { appToForm, emptyAppForm, formToApp, formToRule, newRule, parseClaims, parseList, ruleToForm } from './policyForm';

const app: AdminApp = {
  id: 'wiki',
  name: 'Wiki',
  publicUrl: 'https://wiki.example.com',
  upstream: 'http://10.0.0.5:8080',
  policy: {
    allow: [{ groups: ['staff', 'ops'] }, { claim: { name: 'dept', value: 'eng' } }, { anyUser: true }],
    deny: [{ emails: ['x@example.com'] }],
  },
  publicPaths: ['/health', '/static/*'],
  websockets: true,
  corsPreflight: false,
  preserveHost: true,
  passAccessToken: ['github'],
  compress: true,
  guard: true,
  source: 'console',
};

describe('parseList', () => {
  it('splits on commas and new lines, trims, drops blanks and repeats', () => {
    expect(parseList(' a, b\nc,,b \n')).toEqual(['a', 'b', 'c']);
    expect(parseList('   ')).toEqual([]);
  });
});

describe('rules', () => {
  it('turns each kind into exactly one key', () => {
    expect(formToRule({ ...newRule('anyUser'), values: 'ignored' })).toEqual({ anyUser: true });
    expect(formToRule({ ...newRule('emails'), values: 'a@x.com,\n b@x.com' })).toEqual({ emails: ['a@x.com', 'b@x.com'] });
    expect(formToRule({ ...newRule('domains'), values: 'x.com' })).toEqual({ domains: ['x.com'] });
    expect(formToRule({ ...newRule('roles'), values: 'admin' })).toEqual({ roles: ['admin'] });
    expect(formToRule({ ...newRule('claim'), claimName: ' dept ', claimValue: ' eng ', values: 'x' })).toEqual({
      claim: { name: 'dept', value: 'eng' },
    });
  });

  it('reads rules back into the editor', () => {
    expect(ruleToForm({ groups: ['a', 'b'] })).toMatchObject({ kind: 'groups', values: 'a, b' });
    expect(ruleToForm({ claim: { name: 'n', value: 'v' } })).toMatchObject({ kind: 'claim', claimName: 'n', claimValue: 'v' });
    expect(ruleToForm({ anyUser: true })).toMatchObject({ kind: 'anyUser', values: '' });
  });

  it('gives every row its own key', () => {
    expect(newRule().key).not.toBe(newRule().key);
  });
});

describe('app form', () => {
  it('round-trips an app without its source', () => {
    const form = appToForm(app);
    expect(form.publicPaths).toBe('/health\n/static/*');
    const { source: _source, ...definition } = app;
    expect(formToApp(form)).toEqual(definition);
  });

  it('starts a new app with compression off and no provider’s token, and reads an app without them so', () => {
    expect(emptyAppForm().compress).toBe(false);
    expect(emptyAppForm().passAccessToken).toEqual([]);
    expect(appToForm({ ...app, passAccessToken: true as unknown as string[] }).passAccessToken).toEqual([]);
    const { compress: _compress, ...withoutCompress } = app;
    expect(appToForm(withoutCompress as AdminApp).compress).toBe(false);
  });

  it('an app its own proxy serves round-trips without an upstream, and the choice keeps what was typed', () => {
    const { upstream: _upstream, source: _source, ...definition } = app;
    const form = appToForm({ ...definition, source: 'console' });
    expect(form.servedBy).toBe('proxy');
    expect(formToApp(form)).toEqual(definition);
    expect(formToApp(form)).not.toHaveProperty('upstream');
    // Typed while Gatehouse was chosen, then the proxy chosen: nothing of it is sent.
    expect(formToApp({ ...form, upstream: 'http://10.0.0.5:8080' })).not.toHaveProperty('upstream');
    expect(formToApp({ ...form, servedBy: 'gatehouse', upstream: ' http://10.0.0.5:8080 ' }).upstream).toBe('http://10.0.0.5:8080');
    expect(appToForm(app).servedBy).toBe('gatehouse');
  });

  it('trims text and drops blank public paths', () => {
    const form = { ...emptyAppForm(), id: ' reports ', name: ' Reports ', publicUrl: ' http://r.localhost ', publicPaths: '\n /a \n\n' };
    expect(formToApp(form)).toMatchObject({ id: 'reports', name: 'Reports', publicUrl: 'http://r.localhost', publicPaths: ['/a'] });
    expect(formToApp(form).policy).toEqual({ allow: [], deny: [] });
  });
});

describe('app form: how the app is protected', () => {
  const sso: AdminApp = {
    ...app,
    upstream: undefined,
    publicPaths: [],
    websockets: false,
    preserveHost: false,
    passAccessToken: [],
    compress: false,
    guard: false,
    oidc: {
      clientId: 'wiki',
      authentication: 'client_secret_post',
      redirectUris: ['https://wiki.example.com/cb', 'https://wiki.example.com/cb2'],
      postLogoutRedirectUris: [],
      scopes: ['openid', 'email'],
      thirdParty: true,
      subject: 'pairwise',
      idTokenAlgorithm: 'ES256',
      claimsInIdToken: false,
      accessTokenLifetime: 300_000,
      idTokenLifetime: 3_600_000,
      refreshTokenLifetime: 90_000,
      secretsFromConfig: false,
    },
  };

  it('an app that signs in with OpenID Connect alone round-trips: no host settings, its client settings as written', () => {
    const form = appToForm(sso);
    expect(form).toMatchObject({ guarded: false, signsInWithOidc: true });
    // The app's own id as client id is left empty (the default); lifetimes in words.
    expect(form.oidc).toMatchObject({ clientId: '', redirectUris: 'https://wiki.example.com/cb\nhttps://wiki.example.com/cb2', accessTokenLifetime: '5m', refreshTokenLifetime: '90s' });
    const sent = formToApp(form);
    expect(sent).toMatchObject({ guard: false, publicPaths: [], corsPreflight: false, passAccessToken: [] });
    expect(sent).not.toHaveProperty('upstream');
    expect(sent.oidc).toEqual({
      authentication: 'client_secret_post',
      redirectUris: ['https://wiki.example.com/cb', 'https://wiki.example.com/cb2'],
      postLogoutRedirectUris: [],
      scopes: ['openid', 'email'],
      thirdParty: true,
      subject: 'pairwise',
      idTokenAlgorithm: 'ES256',
      claimsInIdToken: false,
      accessTokenLifetime: '5m',
      idTokenLifetime: '1h',
      refreshTokenLifetime: '90s',
    });
    // What the view adds (secretsFromConfig) is never sent back.
    expect(sent.oidc).not.toHaveProperty('secretsFromConfig');
  });

  it('a guarded app keeps no oidc block unless asked; turning it off sends none', () => {
    expect(formToApp(appToForm(app))).not.toHaveProperty('oidc');
    expect(formToApp({ ...appToForm(sso), signsInWithOidc: false, guarded: true })).not.toHaveProperty('oidc');
  });

  it('keys for private_key_jwt are sent only with it, the JWKS as parsed JSON', () => {
    const form = appToForm(sso);
    const keys = { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] };
    expect(formToApp({ ...form, oidc: { ...form.oidc, jwks: JSON.stringify(keys) } }).oidc).not.toHaveProperty('jwks');
    expect(formToApp({ ...form, oidc: { ...form.oidc, authentication: 'private_key_jwt', jwks: JSON.stringify(keys) } }).oidc?.jwks).toEqual(keys);
  });
});

describe('parseClaims', () => {
  it('reads name=value pairs and skips the rest', () => {
    expect(parseClaims('dept=eng\nlevel = 3, nonsense, =x')).toEqual({ dept: 'eng', level: '3' });
  });
});
