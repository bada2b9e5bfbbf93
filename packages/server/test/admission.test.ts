import { describe, expect, it } from 'vitest';
import { judgeAdmission, OPEN_ORGANIZATION, type AdmissionCase, type AdmissionProvider } from '../src/accounts/admission.js';
import { identityClaims } from '../src/accounts/accountStore.js';
import { mapClaims } from '../src/accounts/identityProfile.js';
import { judgeSignIn, type SignInFacts } from '../src/accounts/signInRules.js';
import { CONSUMER_TENANT } from '@gatehouse/contract';
import { parseConfig } from '../src/config/load.js';

/**
 * One admission judge for every time Gatehouse hears from an IdP (sign-in, link, every re-check) or the
 * rules change (console, reload, start): accounts/admission.ts. These are its rules as a table; the
 * integration tests (security/admission-*.test.ts) run them through the real flows.
 */

const corp: AdmissionProvider = { name: 'Corp', allowedDomains: [] };
const verified = { email: 'ann@corp.example', emailVerified: true };
const judge = (overrides: Partial<AdmissionCase>) => judgeAdmission({ provider: corp, organization: OPEN_ORGANIZATION, profile: verified, ...overrides })?.reason ?? 'admitted';

describe("a kind's own rules read the facts of the IdP's answer", () => {
  const google: AdmissionProvider = { ...corp, kind: 'google', hostedDomains: ['corp.example'] };
  const TENANT = '11111111-1111-4111-8111-111111111111';
  const OTHER = '22222222-2222-4222-8222-222222222222';
  const multi: AdmissionProvider = { ...corp, kind: 'entra', tenant: 'organizations', tenants: [TENANT] };
  const github: AdmissionProvider = { ...corp, kind: 'github', allowedOrganizations: ['acme'] };

  it.each<[string, Partial<AdmissionCase>, string]>([
    // Threat: a personal Gmail account (no hd) or another Workspace signing in where hostedDomains is set.
    ['Google: the Workspace domain', { provider: google, profile: { ...verified, facts: { hostedDomain: 'corp.example' } } }, 'admitted'],
    ['Google: another Workspace', { provider: google, profile: { ...verified, facts: { hostedDomain: 'evil.example' } } }, 'hosted_domain_not_allowed'],
    ['Google: a personal account (no hd)', { provider: google, profile: { ...verified, facts: { hostedDomain: null } } }, 'hosted_domain_not_allowed'],
    ['Google: nothing known of hd never passes', { provider: google, profile: verified }, 'hosted_domain_not_allowed'],
    ['Google without hostedDomains: any account', { provider: { ...google, hostedDomains: [] }, profile: verified }, 'admitted'],
    // Threat: a person of another Entra ID tenant, or a personal Microsoft account, in a multi-tenant app.
    ['Entra multi-tenant: a listed tenant', { provider: multi, profile: { ...verified, facts: { tenant: TENANT } } }, 'admitted'],
    ['Entra multi-tenant: another tenant', { provider: multi, profile: { ...verified, facts: { tenant: OTHER } } }, 'tenant_not_allowed'],
    ['Entra multi-tenant: no tid', { provider: multi, profile: verified }, 'tenant_not_allowed'],
    ['Entra any tenant: an organisation', { provider: { ...multi, tenant: 'common', tenants: [], allowAnyTenant: true }, profile: { ...verified, facts: { tenant: OTHER } } }, 'admitted'],
    ['Entra any tenant: a personal account is not "any tenant"', { provider: { ...multi, tenant: 'common', tenants: [], allowAnyTenant: true }, profile: { ...verified, facts: { tenant: CONSUMER_TENANT } } }, 'tenant_not_allowed'],
    ['Entra: personal accounts when their tenant is listed', { provider: { ...multi, tenant: 'common', tenants: [CONSUMER_TENANT] }, profile: { ...verified, facts: { tenant: CONSUMER_TENANT } } }, 'admitted'],
    ['Entra single tenant by id: its own tid', { provider: { ...corp, kind: 'entra', tenant: TENANT }, profile: { ...verified, facts: { tenant: TENANT } } }, 'admitted'],
    ['Entra single tenant by id: another tid', { provider: { ...corp, kind: 'entra', tenant: TENANT }, profile: { ...verified, facts: { tenant: OTHER } } }, 'tenant_not_allowed'],
    // Threat: someone outside the allowed GitHub organisations.
    ['GitHub: a member of an allowed organisation', { provider: github, profile: { ...verified, facts: { organizations: ['acme'] } } }, 'admitted'],
    ['GitHub: a member of others only', { provider: github, profile: { ...verified, facts: { organizations: ['evil'] } } }, 'organization_not_allowed'],
    ['GitHub: no organisations known', { provider: github, profile: verified }, 'organization_not_allowed'],
    ['a kind’s rule is not read for another kind', { provider: { ...corp, kind: 'oidc', hostedDomains: ['corp.example'] }, profile: verified }, 'admitted'],
  ])('%s', (_name, overrides, expected) => {
    expect(judge(overrides)).toBe(expected);
  });

  it('the email rules come first: an unverified email is refused as such whatever the facts', () => {
    expect(judge({ provider: google, profile: { email: 'ann@corp.example', emailVerified: false, facts: { hostedDomain: 'corp.example' } } })).toBe('email_unverified');
  });
});

describe('identities kept before their facts were kept apart', () => {
  // An upgrade must judge older sessions by what their IdP said, not end them all for knowing nothing.
  it("read Google's hd and Entra's tid from the extra claims, GitHub's organisations from the groups", () => {
    const older = (claims: object) => identityClaims({ claims: JSON.stringify(claims) }).facts;
    expect(older({ groups: [], extra: { hd: 'Corp.Example', tid: '11111111-1111-4111-8111-111111111111' } })).toEqual({
      hostedDomain: 'corp.example',
      tenant: '11111111-1111-4111-8111-111111111111',
      organizations: [],
    });
    // A Google answer without hd was a personal account.
    expect(older({ groups: ['acme', 'acme/platform', 'globex'], extra: {} })).toEqual({ hostedDomain: null, organizations: ['acme', 'globex'] });
    // Kept facts are read as they are.
    expect(older({ groups: ['acme'], extra: { hd: 'x.example' }, facts: { organizations: [] } })).toEqual({ organizations: [] });
  });
});

describe('a live session is judged as a fresh sign-in with what its IdP says now', () => {
  const provider = { ...corp, createUsers: true, trustEmail: true };
  const facts = (overrides: Partial<SignInFacts>) => judgeSignIn({ provider, organization: OPEN_ORGANIZATION, profile: verified, usersWithEmail: [], ...overrides });

  // Threat: an account taking over another user's address through its primary identity (issue #25's high).
  it("a primary identity now asserting another user's address is refused, even from a provider trusted to link by email", () => {
    const other = [{ id: 'u2', status: 'active' as const }];
    expect(facts({ linkedUser: { id: 'u1', status: 'active', primary: true }, usersWithEmail: other })).toMatchObject({ kind: 'refused', reason: 'email_of_another_user', code: 'identity_conflict' });
    // Its own address: fine.
    expect(facts({ linkedUser: { id: 'u1', status: 'active', primary: true }, usersWithEmail: [{ id: 'u1', status: 'active' }] })).toEqual({ kind: 'existing', userId: 'u1' });
    // A secondary identity's email never becomes the user's: no takeover to refuse.
    expect(facts({ linkedUser: { id: 'u1', status: 'active', primary: false }, usersWithEmail: other })).toEqual({ kind: 'existing', userId: 'u1' });
  });
});

describe('mapClaims: an email is verified only by the answer that carried it', () => {
  const oidc = parseConfig({ providers: [{ id: 'corp', name: 'Corp', issuer: 'https://idp.example', clientId: 'c', clientSecret: 's' }] }, { env: {} }).providers[0]!;
  const id = { sub: 'ann', email: 'ann@corp.example', email_verified: true };

  // Threat: an email only userinfo sends, unverified, inheriting the ID token's email_verified: true.
  it("userinfo's own email, without its own verification, is not verified", () => {
    const profile = mapClaims(oidc, id, { sub: 'ann', email: 'admin@corp.example' });
    expect(profile).toMatchObject({ email: 'admin@corp.example', emailVerified: false });
  });

  it("userinfo's email with its own email_verified counts as verified", () => {
    expect(mapClaims(oidc, id, { sub: 'ann', email: 'ann2@corp.example', email_verified: true })).toMatchObject({ email: 'ann2@corp.example', emailVerified: true });
    expect(mapClaims(oidc, id, { sub: 'ann', email: 'ann2@corp.example', email_verified: false })).toMatchObject({ emailVerified: false });
  });

  it("the same address in both answers keeps the ID token's word on it", () => {
    expect(mapClaims(oidc, id, { sub: 'ann', email: 'ann@corp.example' })).toMatchObject({ email: 'ann@corp.example', emailVerified: true });
  });

  it("userinfo's email_verified says nothing of the ID token's email when userinfo sends no email", () => {
    expect(mapClaims(oidc, { sub: 'ann', email: 'ann@corp.example', email_verified: false }, { sub: 'ann', email_verified: true })).toMatchObject({ email: 'ann@corp.example', emailVerified: false });
  });

  // Threat: a `claim:` rule reading groups or an email around the checks made for them.
  it('groups and email claims never become extra claims', () => {
    const profile = mapClaims(oidc, { ...id, groups: ['admins'], department: 'eng' }, { sub: 'ann', email_alias: 'x@corp.example', Email: 'y@corp.example', roles: ['ops'] });
    expect(profile.extra).toEqual({ department: 'eng', roles: ['ops'] });
    expect(profile.groups).toEqual(['admins']);
    const mapped = parseConfig(
      { providers: [{ id: 'corp', name: 'Corp', issuer: 'https://idp.example', clientId: 'c', clientSecret: 's', claims: { groups: 'memberOf', email: 'mail', emailVerified: 'mail_ok' } }] },
      { env: {} },
    ).providers[0]!;
    expect(mapClaims(mapped, { sub: 'ann', mail: 'ann@corp.example', mail_ok: true, memberOf: ['admins'], title: 'boss' }).extra).toEqual({ title: 'boss' });
  });
});
