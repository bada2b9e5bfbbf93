import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adminStatus } from '../../src/accounts/admins.js';
import { policySubject } from '../../src/authorize/policy.js';
import { effectiveClaims, effectiveGroups, identityGroups, type GroupTrust, type GroupTrustLookup } from '../../src/accounts/effectiveGroups.js';
import { policySchema, type Policy } from '@gatehouse/contract';
import { evaluatePolicy, type PolicySubject } from '../../src/authorize/policy.js';
import { parseConfig } from '../../src/config/load.js';

/**
 * Threat: groups from an untrusted provider. Any IdP can assert any group name. A provider admitted
 * only for some email domains (a contractor's IdP) asserting `groups: [admins]` made its user a
 * Gatehouse admin and opened every app guarded by the organisation's own `admins` group. A provider's
 * groups now count only where it is trusted for them (`trustGroups`), or prefixed (`groupPrefix`), and
 * `admins.groups` names the provider it believes.
 */

const corp: GroupTrust = { id: 'corp', enabled: true, trustGroups: true };
const contractor: GroupTrust = { id: 'contractor', enabled: true, trustGroups: false };
const partner: GroupTrust = { id: 'partner', enabled: true, trustGroups: false, groupPrefix: 'partner:' };
const registry = (...providers: GroupTrust[]): GroupTrustLookup => ({ get: (id) => providers.find((provider) => provider.id === id && provider.enabled) });
const providers = registry(corp, contractor, partner);

const { admins } = parseConfig({ admins: { groups: [{ provider: 'corp', group: 'admins' }] } }, { env: {} });
const user = { email: 'mallory@contractor.example', roles: '[]' };
const adminsOnly = policySchema.parse({ allow: [{ groups: ['admins'] }] });
const adminRole = policySchema.parse({ allow: [{ roles: ['admin'] }] });

describe('the groups that count (effectiveGroups)', () => {
  it('an untrusted provider without a prefix brings no groups at all', () => {
    expect(effectiveGroups(contractor, ['admins', 'staff'])).toEqual([]);
  });

  it('a trusted provider brings its groups as asserted', () => {
    expect(effectiveGroups(corp, ['admins', 'staff'])).toEqual(['admins', 'staff']);
  });

  it('a prefixed provider brings its groups only prefixed, trusted or not', () => {
    expect(effectiveGroups(partner, ['admins', 'staff'])).toEqual(['partner:admins', 'partner:staff']);
    expect(effectiveGroups({ ...partner, trustGroups: true }, ['admins'])).toEqual(['partner:admins']);
  });

  it('a provider that is off or gone brings nothing, however trusted', () => {
    expect(effectiveGroups({ ...corp, enabled: false }, ['admins'])).toEqual([]);
    expect(effectiveGroups(undefined, ['admins'])).toEqual([]);
    expect(identityGroups(registry({ ...corp, enabled: false }), { provider_id: 'corp' }, { groups: ['admins'] })).toEqual({ providerId: undefined, asserted: [], counted: [], claims: {} });
    expect(identityGroups(providers, { provider_id: 'deleted' }, { groups: ['admins'] })).toEqual({ providerId: undefined, asserted: [], counted: [], claims: {} });
  });
});

describe('a contractor IdP asserting `admins`', () => {
  const fromContractor = identityGroups(providers, { provider_id: 'contractor' }, { groups: ['admins'] });
  const fromPartner = identityGroups(providers, { provider_id: 'partner' }, { groups: ['admins'] });
  const fromCorp = identityGroups(providers, { provider_id: 'corp' }, { groups: ['admins'] });

  it('is not a Gatehouse admin (admins.groups names corp)', () => {
    expect(adminStatus(admins, user, fromContractor)).toEqual({ admin: false, fromConfig: false });
    expect(adminStatus(admins, user, fromPartner)).toEqual({ admin: false, fromConfig: false });
    expect(adminStatus(admins, user, fromCorp)).toEqual({ admin: true, fromConfig: true });
  });

  it('does not pass an `admins` group policy, nor a `roles: [admin]` one', () => {
    for (const groups of [fromContractor, fromPartner]) {
      expect(evaluatePolicy(adminsOnly, policySubject(admins, user, groups)).allow).toBe(false);
      expect(evaluatePolicy(adminRole, policySubject(admins, user, groups)).allow).toBe(false);
    }
    expect(evaluatePolicy(adminsOnly, policySubject(admins, user, fromCorp)).allow).toBe(true);
    expect(evaluatePolicy(adminRole, policySubject(admins, user, fromCorp)).allow).toBe(true);
  });

  it('with a prefix, matches only rules written for the prefixed name', () => {
    expect(policySubject(admins, user, fromPartner).groups).toEqual(['partner:admins']);
    expect(evaluatePolicy(policySchema.parse({ allow: [{ groups: ['partner:admins'] }] }), policySubject(admins, user, fromPartner)).allow).toBe(true);
  });

  it("admins.groups believes only the named provider, as it asserts the group (before its prefix)", () => {
    const partnerAdmins = parseConfig({ admins: { groups: [{ provider: 'partner', group: 'admins' }] } }, { env: {} }).admins;
    expect(adminStatus(partnerAdmins, user, fromPartner).admin).toBe(true);
    expect(adminStatus(partnerAdmins, user, fromCorp).admin).toBe(false);
    // The console's user list looks at every identity of a user: still per provider, never pooled.
    const crossed = [identityGroups(providers, { provider_id: 'corp' }, { groups: ['staff'] }), fromContractor];
    expect(adminStatus(admins, user, crossed).fromConfig).toBe(false);
    expect(adminStatus(admins, user, [...crossed, fromCorp]).fromConfig).toBe(true);
  });

  it('an admin by email stays one whatever provider the session came from', () => {
    const byEmail = parseConfig({ admins: { emails: ['Mallory@Contractor.example'] } }, { env: {} }).admins;
    expect(adminStatus(byEmail, user, fromContractor)).toEqual({ admin: true, fromConfig: true });
  });
});

/**
 * Threat: claims from an untrusted provider. `claim:` rules read the IdP's other claims; a partner IdP
 * asserting `department: finance` or `roles: [admin]` passed a rule written for the organisation's own
 * directory, the hole closed for `groups:` before. Claims now count by the provider's trust too.
 */
describe('the claims that count (effectiveClaims)', () => {
  const finance = policySchema.parse({ allow: [{ claim: { name: 'department', value: 'finance' } }] });
  const asserted = { department: 'finance', roles: ['admin'] };
  const subjectFrom = (provider: string) => policySubject(admins, user, identityGroups(providers, { provider_id: provider }, { groups: [], extra: asserted }));

  it('an untrusted provider without a prefix brings no claims; a trusted one brings them as asserted', () => {
    expect(effectiveClaims(contractor, asserted)).toEqual({});
    expect(effectiveClaims(corp, asserted)).toEqual(asserted);
    expect(evaluatePolicy(finance, subjectFrom('contractor')).allow).toBe(false);
    expect(evaluatePolicy(finance, subjectFrom('corp')).allow).toBe(true);
  });

  it('a prefixed provider brings them only under prefixed names', () => {
    expect(effectiveClaims(partner, asserted)).toEqual({ 'partner:department': 'finance', 'partner:roles': ['admin'] });
    expect(evaluatePolicy(finance, subjectFrom('partner')).allow).toBe(false);
    expect(evaluatePolicy(policySchema.parse({ allow: [{ claim: { name: 'partner:department', value: 'finance' } }] }), subjectFrom('partner')).allow).toBe(true);
  });

  it('trustClaims decides apart from trustGroups when set', () => {
    expect(effectiveClaims({ ...corp, trustClaims: false }, asserted)).toEqual({});
    expect(effectiveClaims({ ...contractor, trustClaims: true }, asserted)).toEqual(asserted);
  });

  it('a provider off or gone brings none; groups and emails never count as claims (an old snapshot may hold them)', () => {
    expect(effectiveClaims({ ...corp, enabled: false }, asserted)).toEqual({});
    expect(effectiveClaims(undefined, asserted)).toEqual({});
    expect(effectiveClaims(corp, { groups: ['admins'], email: 'a@b.example', email_verified: true, Email_Alias: 'x', title: 'boss' })).toEqual({ title: 'boss' });
  });
});

/** Small alphabets so that generated rules and subjects often meet. */
const groupName = fc.constantFrom('admins', 'staff', 'ops', 'partner:admins', 'partner:staff');
const email = fc.constantFrom('alice@example.com', 'bob@example.com', 'mallory@contractor.example');
const ruleArb = fc.oneof(
  fc.constant({ anyUser: true as const }),
  fc.record({ emails: fc.uniqueArray(email, { minLength: 1, maxLength: 2 }) }),
  fc.record({ domains: fc.uniqueArray(fc.constantFrom('example.com', 'contractor.example'), { minLength: 1, maxLength: 2 }) }),
  fc.record({ groups: fc.uniqueArray(groupName, { minLength: 1, maxLength: 3 }) }),
  fc.record({ roles: fc.constant(['admin' as const]) }),
);
const policyArb: fc.Arbitrary<Policy> = fc
  .record({ allow: fc.array(ruleArb, { minLength: 1, maxLength: 4 }), deny: fc.array(ruleArb, { maxLength: 3 }) })
  .map((input) => policySchema.parse(input));
const subjectArb: fc.Arbitrary<PolicySubject> = fc.record({
  email,
  groups: fc.uniqueArray(groupName, { maxLength: 4 }),
  roles: fc.subarray(['admin']),
  claims: fc.constant({}),
});
const alone = (policy: Policy, list: 'allow' | 'deny', index: number): Policy => ({ allow: [policy[list][index]!], deny: [] });

describe('the policy evaluator (properties)', () => {
  it('deny wins over allow: a subject matched by any deny rule is refused', () => {
    fc.assert(
      fc.property(policyArb, subjectArb, (policy, subject) => {
        const deniedByARule = policy.deny.some((_, index) => evaluatePolicy(alone(policy, 'deny', index), subject).allow);
        if (deniedByARule) expect(evaluatePolicy(policy, subject)).toMatchObject({ allow: false, decidedBy: { list: 'deny' } });
      }),
      { numRuns: 2000 },
    );
  });

  it('with no matching allow rule, the answer is deny', () => {
    fc.assert(
      fc.property(policyArb, subjectArb, (policy, subject) => {
        const anAllowMatches = policy.allow.some((_, index) => evaluatePolicy(alone(policy, 'allow', index), subject).allow);
        const decision = evaluatePolicy(policy, subject);
        if (!anAllowMatches) expect(decision.allow).toBe(false);
        if (decision.allow) expect(decision.decidedBy?.list).toBe('allow');
      }),
      { numRuns: 2000 },
    );
  });

  it("an untrusted provider's groups never change a decision, whatever it asserts", () => {
    const adminsFromConfig = parseConfig({ admins: { groups: [{ provider: 'corp', group: 'admins' }, { provider: 'corp', group: 'ops' }] } }, { env: {} }).admins;
    fc.assert(
      fc.property(policyArb, email, fc.uniqueArray(groupName, { maxLength: 5 }), fc.boolean(), (policy, address, asserted, consoleAdmin) => {
        const person = { email: address, roles: consoleAdmin ? '["admin"]' : '[]' };
        const claimed = identityGroups(providers, { provider_id: 'contractor' }, { groups: asserted });
        const nothing = identityGroups(providers, { provider_id: 'contractor' }, { groups: [] });
        expect(evaluatePolicy(policy, policySubject(adminsFromConfig, person, claimed))).toEqual(evaluatePolicy(policy, policySubject(adminsFromConfig, person, nothing)));
        expect(adminStatus(adminsFromConfig, person, claimed)).toEqual(adminStatus(adminsFromConfig, person, nothing));
      }),
      { numRuns: 2000 },
    );
  });
});
