import { formatIssues } from '@gatehouse/contract';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { providerPresets, providerSchema } from '../src/config/schema.js';

const base = { id: 'corp', name: 'Corp', clientId: 'gatehouse', clientSecret: 's3cret' };
const parse = (input: Record<string, unknown>) => providerSchema.parse({ ...base, ...input });
const problems = (input: Record<string, unknown>) => {
  const result = providerSchema.safeParse({ ...base, ...input });
  return result.success ? [] : formatIssues(result.error.issues);
};

describe('provider kinds (the contract\'s definitions/providers/)', () => {
  it('an entry without kind is a generic OpenID Connect provider, as before kinds existed', () => {
    const provider = parse({ issuer: 'https://sso.example.com' });
    expect(provider).toMatchObject({ kind: 'oidc', issuer: 'https://sso.example.com', scopes: ['openid', 'email', 'profile'], createUsers: false });
  });

  it('an unknown kind is refused, naming the kinds there are', () => {
    expect(problems({ kind: 'saml', issuer: 'https://sso.example.com' }).join()).toMatch(/kind: must be one of oidc, google, entra, okta, keycloak, auth0, gitlab/);
  });

  it('a definition as stored (the normalised output, with its derived issuer) loads again unchanged', () => {
    for (const input of [
      { kind: 'google', hostedDomains: ['example.com'] },
      { kind: 'entra', tenant: 'organizations', tenants: ['11111111-1111-4111-8111-111111111111'] },
      { kind: 'okta', domain: 'example.okta.com', authorizationServerId: 'default' },
      { kind: 'keycloak', baseUrl: 'https://sso.example.com/', realm: 'staff' },
      { kind: 'auth0', domain: 'example.eu.auth0.com', groupsClaim: 'https://example.com/groups' },
      { kind: 'gitlab' },
    ]) {
      const once = parse(input);
      expect(providerSchema.parse(JSON.parse(JSON.stringify(once)))).toEqual(once);
    }
  });

  it('every kind has a preset for the console: label, docs page, its own fields', () => {
    expect(providerPresets.map((preset) => preset.kind)).toEqual(['oidc', 'google', 'entra', 'okta', 'keycloak', 'auth0', 'gitlab', 'github']);
    for (const preset of providerPresets) {
      expect(preset.label.length).toBeGreaterThan(0);
      expect(preset.docs).toMatch(/^docs\//);
    }
  });

  // Regression: the generic kind pointed at docs/configuration.md#providers, a heading that is not there.
  it("every preset's docs page is in docs/providers/ and exists (the console shows it as the setup guide)", () => {
    for (const preset of providerPresets) {
      expect(preset.docs, preset.kind).toMatch(/^docs\/providers\/[A-Za-z0-9-]+\.md$/);
      expect(existsSync(fileURLToPath(new URL(`../../../${preset.docs}`, import.meta.url))), preset.docs).toBe(true);
    }
  });
});

describe('google', () => {
  it('has the fixed issuer; a hosted domain lets new people in by default', () => {
    expect(parse({ kind: 'google' })).toMatchObject({ issuer: 'https://accounts.google.com', hostedDomains: [], createUsers: false });
    expect(parse({ kind: 'google', hostedDomains: ['Example.COM'] })).toMatchObject({ hostedDomains: ['example.com'], createUsers: true });
  });

  // Threat: a preset named google pointing anywhere else would make its hd check a lie.
  it('takes no issuer but its own, or a loopback stand-in (tests)', () => {
    expect(problems({ kind: 'google', issuer: 'https://evil.example' }).join()).toMatch(/issuer: is derived from this kind's options/);
    expect(parse({ kind: 'google', issuer: 'http://127.0.0.1:9999' }).issuer).toBe('http://127.0.0.1:9999');
    expect(problems({ kind: 'google', hostedDomains: ['not a domain'] })).not.toEqual([]);
  });
});

describe('entra', () => {
  const TENANT = '11111111-1111-4111-8111-111111111111';

  it('one tenant, by id or verified domain: issuer <authority>/<tenant>/v2.0, offline_access, xms_edov as emailVerified', () => {
    expect(parse({ kind: 'entra', tenant: TENANT.toUpperCase() })).toMatchObject({
      issuer: `https://login.microsoftonline.com/${TENANT}/v2.0`,
      scopes: ['openid', 'email', 'profile', 'offline_access'],
      claims: { emailVerified: 'xms_edov', email: 'email', groups: 'groups' },
      graphUrl: 'https://graph.microsoft.com',
      assumeEmailVerified: false,
    });
    expect(parse({ kind: 'entra', tenant: 'contoso.onmicrosoft.com' }).issuer).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0');
  });

  // Threat: a multi-tenant app admitting every Entra ID tenant in the world by omission.
  it('multi-tenant needs the tenants admitted, or allowAnyTenant said out loud', () => {
    expect(problems({ kind: 'entra', tenant: 'organizations' }).join()).toMatch(/tenants: is required with tenant: organizations/);
    expect(parse({ kind: 'entra', tenant: 'common', allowAnyTenant: true }).issuer).toBe('https://login.microsoftonline.com/common/v2.0');
    expect(problems({ kind: 'entra', tenant: 'organizations', tenants: [TENANT], allowAnyTenant: true }).join()).toMatch(/allowAnyTenant: contradicts tenants/);
    expect(problems({ kind: 'entra', tenant: TENANT, tenants: [TENANT] }).join()).toMatch(/tenants: is for a multi-tenant app/);
    expect(problems({ kind: 'entra', tenant: 'organizations', tenants: ['contoso.com'] }).join()).toMatch(/tenants\[0\]: must be a tenant id/);
  });

  // Threat: another tenant's administrator deciding which emails count as verified here.
  it('assumeEmailVerified only where exactly one tenant is admitted', () => {
    expect(parse({ kind: 'entra', tenant: TENANT, assumeEmailVerified: true }).assumeEmailVerified).toBe(true);
    expect(parse({ kind: 'entra', tenant: 'organizations', tenants: [TENANT], assumeEmailVerified: true }).assumeEmailVerified).toBe(true);
    const other = '22222222-2222-4222-8222-222222222222';
    expect(problems({ kind: 'entra', tenant: 'organizations', tenants: [TENANT, other], assumeEmailVerified: true }).join()).toMatch(/assumeEmailVerified: vouches for one tenant's emails/);
    expect(problems({ kind: 'entra', tenant: 'common', allowAnyTenant: true, assumeEmailVerified: true }).join()).toMatch(/assumeEmailVerified: vouches for one tenant's emails/);
  });

  it('national clouds: single tenant only; loopbackStandIn only on loopback; no issuer override', () => {
    expect(parse({ kind: 'entra', tenant: TENANT, authority: 'https://login.microsoftonline.us', graphUrl: 'https://graph.microsoft.us' }).issuer).toBe(`https://login.microsoftonline.us/${TENANT}/v2.0`);
    expect(problems({ kind: 'entra', tenant: 'organizations', tenants: [TENANT], authority: 'https://login.microsoftonline.us' }).join()).toMatch(/tenant: must be one tenant on a national cloud/);
    expect(problems({ kind: 'entra', tenant: TENANT, authority: 'https://login.evil.example' })).not.toEqual([]);
    expect(problems({ kind: 'entra', tenant: TENANT, loopbackStandIn: 'https://stand-in.example' }).join()).toMatch(/loopbackStandIn/);
    expect(problems({ kind: 'entra', tenant: TENANT, issuer: 'http://127.0.0.1:1234' }).join()).toMatch(/issuer: is derived/);
    expect(problems({ kind: 'entra', tenant: 'consumers' }).join()).toMatch(/tenant: must be a tenant id/);
  });
});

describe('okta, keycloak, auth0, gitlab', () => {
  it('okta: org or custom authorization server; the groups scope asked for', () => {
    expect(parse({ kind: 'okta', domain: 'https://Example.okta.com/' })).toMatchObject({ issuer: 'https://example.okta.com', scopes: ['openid', 'email', 'profile', 'offline_access', 'groups'] });
    expect(parse({ kind: 'okta', domain: 'example.okta.com', authorizationServerId: 'default' }).issuer).toBe('https://example.okta.com/oauth2/default');
    expect(problems({ kind: 'okta', domain: 'example.okta.com', authorizationServerId: '../x' }).join()).toMatch(/authorizationServerId/);
  });

  it('keycloak: <baseUrl>/realms/<realm>', () => {
    expect(parse({ kind: 'keycloak', baseUrl: 'https://sso.example.com/auth/', realm: 'staff' }).issuer).toBe('https://sso.example.com/auth/realms/staff');
    expect(problems({ kind: 'keycloak', baseUrl: 'http://sso.example.com', realm: 'staff' }).join()).toMatch(/baseUrl: must be https/);
    expect(problems({ kind: 'keycloak', baseUrl: 'https://sso.example.com', realm: 'a/b' }).join()).toMatch(/realm/);
  });

  it('auth0: https://<domain>/ with the trailing slash; groupsClaim names the namespaced claim', () => {
    expect(parse({ kind: 'auth0', domain: 'example.eu.auth0.com', groupsClaim: 'https://example.com/groups' })).toMatchObject({
      issuer: 'https://example.eu.auth0.com/',
      claims: { groups: 'https://example.com/groups' },
    });
    expect(problems({ kind: 'auth0', domain: 'example.eu.auth0.com', groupsClaim: 'groups' }).join()).toMatch(/groupsClaim: must be a namespaced claim/);
  });

  it('gitlab: gitlab.com by default, self-managed by baseUrl; groups_direct', () => {
    expect(parse({ kind: 'gitlab' })).toMatchObject({ issuer: 'https://gitlab.com', claims: { groups: 'groups_direct' } });
    expect(parse({ kind: 'gitlab', baseUrl: 'https://git.example.com/' }).issuer).toBe('https://git.example.com');
    expect(problems({ kind: 'gitlab', baseUrl: 'https://git.example.com', issuer: 'https://gitlab.com' }).join()).toMatch(/issuer: is the baseUrl/);
  });

  // Threat: group paths on gitlab.com are anyone's to create; a self-managed GitLab's are the organisation's.
  it('gitlab: gitlab.com groups count prefixed (gitlab:) by default; a self-managed GitLab as any provider', () => {
    expect(parse({ kind: 'gitlab' }).groupPrefix).toBe('gitlab:');
    expect(parse({ kind: 'gitlab', groupPrefix: 'glc/' }).groupPrefix).toBe('glc/');
    expect(parse({ kind: 'gitlab', baseUrl: 'https://git.example.com' }).groupPrefix).toBeUndefined();
  });

  it('each still follows the OpenID Connect rules: openid scope, a credential', () => {
    expect(problems({ kind: 'okta', domain: 'example.okta.com', scopes: ['email'] }).join()).toMatch(/scopes: must include "openid"/);
    expect(problems({ kind: 'gitlab', clientSecret: undefined }).join()).toMatch(/clientSecret: is required/);
  });
});
