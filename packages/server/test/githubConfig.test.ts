import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/load.js';

const github = { kind: 'github', id: 'github', name: 'GitHub', clientId: 'Iv1.abc', clientSecret: 's3cret' };

function providerOf(entry: Record<string, unknown>) {
  return parseConfig({ providers: [entry] }, { env: {} }).providers[0]!;
}

function problemsOf(entry: Record<string, unknown>): string {
  try {
    parseConfig({ providers: [entry] }, { env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('kind: github', () => {
  it('github.com by default: its namespace, the scopes it needs, groups read, nobody unknown created', () => {
    expect(providerOf(github)).toMatchObject({
      kind: 'github',
      issuer: 'https://github.com',
      scopes: ['read:user', 'user:email', 'read:org'],
      readsGroups: true,
      allowedOrganizations: [],
      clientAuthMethod: 'client_secret_post',
      pushedAuthorizationRequests: 'never',
      assumeEmailVerified: false,
      // A public IdP: without a domain list nobody unknown gets a user unless said.
      createUsers: false,
      trustGroups: false,
    });
  });

  // Threat: GitHub organisation names are anyone's to register, so a free organisation named like an
  // Entra group id or `platform-admins` must never meet a rule written for the organisation's groups.
  it('its groups count prefixed by default (github:), never bare; another prefix may be chosen', () => {
    expect(providerOf(github).groupPrefix).toBe('github:');
    expect(providerOf({ ...github, trustGroups: true }).groupPrefix).toBe('github:');
    expect(providerOf({ ...github, groupPrefix: 'gh/' }).groupPrefix).toBe('gh/');
  });

  it('GitHub Enterprise Server at its base URL; organisation logins compared lowercased', () => {
    const provider = providerOf({ ...github, baseUrl: 'https://github.example.com/', allowedOrganizations: ['Acme-Corp'] });
    expect(provider).toMatchObject({ issuer: 'https://github.example.com', baseUrl: 'https://github.example.com', allowedOrganizations: ['acme-corp'] });
  });

  it('without read:org, organisations and teams are not read', () => {
    expect(providerOf({ ...github, scopes: ['read:user', 'user:email'] })).toMatchObject({ readsGroups: false });
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no client secret', { clientSecret: undefined }, /clientSecret: is required/],
    ['no way to read the email', { scopes: ['read:user', 'read:org'] }, /scopes: must include "user:email"/],
    ['allowedOrganizations without read:org', { scopes: ['read:user', 'user:email'], allowedOrganizations: ['acme'] }, /must include "read:org" for allowedOrganizations/],
    ['not an organisation login', { allowedOrganizations: ['acme/platform'] }, /is not a GitHub organisation login/],
    // Threat: plain http to a GitHub Enterprise Server across the network (the token and code in clear).
    ['plain http off loopback', { baseUrl: 'http://github.example.com' }, /must be https/],
    ['an issuer other than its own', { issuer: 'https://evil.example' }, /issuer: is derived from baseUrl/],
    ['assumeEmailVerified', { assumeEmailVerified: true }, /GitHub says itself whether an email is verified/],
    ['an unknown key', { organization: 'acme' }, /organization/],
  ])('refuses %s', (_, change, message) => {
    expect(problemsOf({ ...github, ...change })).toMatch(message);
  });

  it('accepts the issuer it derives (a definition saved by the console repeats it)', () => {
    expect(providerOf({ ...github, issuer: 'https://github.com' }).issuer).toBe('https://github.com');
  });
});
