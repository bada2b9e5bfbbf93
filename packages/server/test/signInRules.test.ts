import { describe, expect, it } from 'vitest';
import { OPEN_ORGANIZATION } from '../src/accounts/admission.js';
import { decideLink, decideSignIn, judgeSignIn, type LinkFacts, type SignInFacts } from '../src/accounts/signInRules.js';
import { signInRefusalReasons } from '@gatehouse/contract';
import { AppError, refusalCodes, signInRefused } from '../src/errors.js';

const provider = { name: 'Corp', allowedDomains: [] as string[], createUsers: true, trustEmail: false };
const verified = { email: 'ann@example.com', emailVerified: true };

function outcome(facts: Partial<SignInFacts>): string {
  try {
    const decision = decideSignIn({ provider, organization: OPEN_ORGANIZATION, profile: verified, usersWithEmail: [], ...facts });
    return decision.kind === 'create' ? 'create' : `${decision.kind}:${decision.userId}`;
  } catch (error) {
    // A refusal is its catalogue code and the reason the rules computed.
    if (error instanceof AppError) return `${error.code}/${error.refusal?.reason}`;
    throw error;
  }
}

describe('first sign-in and linking rules', () => {
  it.each<[string, Partial<SignInFacts>, string]>([
    ['a linked identity signs into its user', { linkedUser: { id: 'u1', status: 'active' } }, 'existing:u1'],
    ['a linked identity of a suspended user is refused', { linkedUser: { id: 'u1', status: 'suspended' } }, 'account_suspended/account_suspended'],
    ['a new person is created', {}, 'create'],
    ['no verified email: refused', { profile: { email: 'ann@example.com', emailVerified: false } }, 'sign_in_not_allowed/email_unverified'],
    // Threat: a hostile value read as an email; refused as malformed, and never called "unverified".
    ['a malformed email: refused as malformed', { profile: { email: undefined, emailProblem: 'has more than one @', emailVerified: true } }, 'sign_in_not_allowed/email_malformed'],
    ['a malformed email that is also unverified is still malformed', { profile: { email: undefined, emailProblem: 'has no @', emailVerified: false } }, 'sign_in_not_allowed/email_malformed'],
    ['no email at all: refused', { profile: { email: undefined, emailVerified: true } }, 'sign_in_not_allowed/email_missing'],
    ['domain not allowed', { provider: { ...provider, allowedDomains: ['corp.example'] } }, 'sign_in_not_allowed/domain_not_allowed_by_provider'],
    ['domain allowed', { provider: { ...provider, allowedDomains: ['example.com'] } }, 'create'],
    ['sub-domain is not the domain', { provider: { ...provider, allowedDomains: ['ample.com'] } }, 'sign_in_not_allowed/domain_not_allowed_by_provider'],
    ['domain list also binds linked identities', { provider: { ...provider, allowedDomains: ['corp.example'] }, linkedUser: { id: 'u1', status: 'active' } }, 'sign_in_not_allowed/domain_not_allowed_by_provider'],
    ['unknown people are not created when the provider says so', { provider: { ...provider, createUsers: false } }, 'sign_in_not_allowed/users_not_created_by_provider'],
    // Threat: account takeover by an IdP that asserts someone else's email.
    ['email of another user, untrusted provider: conflict', { usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'identity_conflict/email_taken'],
    ['email of another user, trusted provider: linked', { provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'link:u2'],
    ['trusted provider, but that user is suspended', { provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'suspended' }] }, 'account_suspended/account_suspended'],
    ['trusted provider, ambiguous email owner: conflict', { provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }, { id: 'u3', status: 'active' }] }, 'identity_conflict/email_ambiguous'],
    ['trusted provider, unverified email never links', { provider: { ...provider, trustEmail: true }, profile: { email: 'ann@example.com', emailVerified: false }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'sign_in_not_allowed/email_unverified'],
  ])('%s', (_name, facts, expected) => {
    expect(outcome(facts)).toBe(expected);
  });
});

/**
 * The organisation's rules (admin console, "Who may sign in") apply on top of the provider's: both must
 * admit a person. Threat: an admin narrowing sign-in for everyone must not be undone by one provider's
 * looser rules, and the organisation's settings must never admit someone a provider refuses.
 */
describe('organisation-wide rules narrow, never widen', () => {
  const org = (allowedDomains: string[], createUsers: boolean) => ({ organization: { allowedDomains, createUsers } });
  it.each<[string, Partial<SignInFacts>, string]>([
    ['open organisation: the provider decides', org([], true), 'create'],
    ['organisation domain admits', org(['example.com'], true), 'create'],
    ['organisation domain refuses a new person', org(['corp.example'], true), 'sign_in_not_allowed/domain_not_allowed_by_organization'],
    ['organisation domain refuses a linked identity too', { ...org(['corp.example'], true), linkedUser: { id: 'u1', status: 'active' } }, 'sign_in_not_allowed/domain_not_allowed_by_organization'],
    ['organisation domain refuses an email link too', { ...org(['corp.example'], true), provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'sign_in_not_allowed/domain_not_allowed_by_organization'],
    ['organisation creates nobody', org([], false), 'sign_in_not_allowed/users_not_created_by_organization'],
    ['organisation creates nobody, but known people still sign in', { ...org([], false), linkedUser: { id: 'u1', status: 'active' } }, 'existing:u1'],
    ['organisation creates nobody, a trusted email link still works', { ...org([], false), provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'link:u2'],
    ['organisation would create, provider does not: refused', { ...org([], true), provider: { ...provider, createUsers: false } }, 'sign_in_not_allowed/users_not_created_by_provider'],
    ['both domain lists must admit: provider refuses', { ...org(['example.com'], true), provider: { ...provider, allowedDomains: ['corp.example'] } }, 'sign_in_not_allowed/domain_not_allowed_by_provider'],
    ['both domain lists must admit: organisation refuses', { ...org(['corp.example'], true), provider: { ...provider, allowedDomains: ['example.com'] } }, 'sign_in_not_allowed/domain_not_allowed_by_organization'],
    ['both domain lists admit', { ...org(['example.com', 'corp.example'], true), provider: { ...provider, allowedDomains: ['example.com'] } }, 'create'],
    ['a verified email is still required', { ...org(['example.com'], true), profile: { email: 'ann@example.com', emailVerified: false } }, 'sign_in_not_allowed/email_unverified'],
  ])('%s', (_name, facts, expected) => {
    expect(outcome(facts)).toBe(expected);
  });

  it('a refusal names the rule that said no (for the console’s test sign-in), never throwing', () => {
    const judge = (facts: Partial<SignInFacts>) => judgeSignIn({ provider, organization: OPEN_ORGANIZATION, profile: verified, usersWithEmail: [], ...facts });
    expect(judge({ organization: { allowedDomains: ['corp.example'], createUsers: true } })).toEqual({
      kind: 'refused',
      reason: 'domain_not_allowed_by_organization',
      code: 'sign_in_not_allowed',
      why: "example.com is not among the organisation's allowed domains",
      params: { provider: 'Corp', email: 'ann@example.com', domain: 'example.com' },
    });
    expect(judge({ profile: { email: undefined, emailProblem: 'has more than one @', emailVerified: true } })).toEqual({
      kind: 'refused',
      reason: 'email_malformed',
      code: 'sign_in_not_allowed',
      why: 'the email Corp sent has more than one @',
      params: { provider: 'Corp' },
    });
    expect(judge({ provider: { ...provider, allowedDomains: ['corp.example'] } })).toMatchObject({ why: "example.com is not among Corp's allowed domains" });
    expect(judge({ organization: { allowedDomains: [], createUsers: false } })).toMatchObject({ why: 'the organisation does not create users for people unknown to Gatehouse' });
    expect(judge({ provider: { ...provider, createUsers: false } })).toMatchObject({ why: 'Corp does not create users for people unknown to Gatehouse' });
    expect(judge({ usersWithEmail: [{ id: 'u2', status: 'active' }] })).toMatchObject({ code: 'identity_conflict' });
    expect(judge({})).toEqual({ kind: 'create' });
  });
});

describe('linking rules (a signed-in user links another provider)', () => {
  function link(facts: Partial<LinkFacts>): string {
    try {
      return decideLink({ provider: { name: 'Corp', allowedDomains: [] }, organization: OPEN_ORGANIZATION, profile: verified, userId: 'u1', ...facts }).kind;
    } catch (error) {
      if (error instanceof AppError) return `${error.code}/${error.refusal?.reason}`;
      throw error;
    }
  }

  it.each<[string, Partial<LinkFacts>, string]>([
    ['a new identity links', {}, 'link'],
    ['an identity already linked to this user is a no-op', { owner: { id: 'u1' } }, 'already-linked'],
    // Threat: account takeover. An identity of another user is never moved to this one.
    ['an identity of another user is refused', { owner: { id: 'u2' } }, 'identity_conflict/identity_taken'],
    ['no email match is needed (the person proved both accounts)', { profile: { email: 'other@partner.example', emailVerified: true } }, 'link'],
    ['the provider’s domain list still applies', { provider: { name: 'Corp', allowedDomains: ['corp.example'] } }, 'sign_in_not_allowed/domain_not_allowed_by_provider'],
    ['domain list with an unverified email', { provider: { name: 'Corp', allowedDomains: ['example.com'] }, profile: { email: 'ann@example.com', emailVerified: false } }, 'sign_in_not_allowed/email_unverified'],
    ['domain list with a malformed email', { provider: { name: 'Corp', allowedDomains: ['example.com'] }, profile: { email: undefined, emailProblem: 'has no @', emailVerified: true } }, 'sign_in_not_allowed/email_malformed'],
    ['domain list with no email', { provider: { name: 'Corp', allowedDomains: ['example.com'] }, profile: { email: undefined, emailVerified: true } }, 'sign_in_not_allowed/email_missing'],
    ['domain list satisfied', { provider: { name: 'Corp', allowedDomains: ['example.com'] } }, 'link'],
    ['the organisation’s domain list applies too', { organization: { allowedDomains: ['corp.example'], createUsers: true } }, 'sign_in_not_allowed/domain_not_allowed_by_organization'],
    ['the organisation’s domain list satisfied', { organization: { allowedDomains: ['example.com'], createUsers: true } }, 'link'],
    ['the organisation not creating users does not stop linking', { organization: { allowedDomains: [], createUsers: false } }, 'link'],
  ])('%s', (_name, facts, expected) => {
    expect(link(facts)).toBe(expected);
  });
});

/**
 * The sentence a person reads names the real reason the rules computed (issue #17): a malformed email
 * is not "unverified", a domain rule names the domain. The reason and the admins' sentence ride along
 * on the error, for the audit event and the log line; the person never sees `why`.
 */
describe('what a refused person reads', () => {
  function refusal(facts: Partial<SignInFacts>): AppError {
    try {
      decideSignIn({ provider, organization: OPEN_ORGANIZATION, profile: verified, usersWithEmail: [], ...facts });
    } catch (error) {
      if (error instanceof AppError) return error;
      throw error;
    }
    throw new Error('not refused');
  }

  it.each<[string, Partial<SignInFacts>, RegExp]>([
    ['no email', { profile: { email: undefined, emailVerified: true } }, /^Your account at Corp did not share an email address/],
    ['a malformed email', { profile: { email: undefined, emailProblem: 'has more than one @', emailVerified: true } }, /^The email address your account at Corp sent is not one Gatehouse can use/],
    ['an unverified email', { profile: { email: 'ann@example.com', emailVerified: false } }, /^Your account at Corp has no verified email \(ann@example\.com is not verified there\)/],
    ['the provider’s domain list', { provider: { ...provider, allowedDomains: ['corp.example'] } }, /^example\.com is not allowed for signing in with Corp\./],
    ['the organisation’s domain list', { organization: { allowedDomains: ['corp.example'], createUsers: true } }, /^example\.com is not allowed here\./],
    ['no user created by the provider', { provider: { ...provider, createUsers: false } }, /^ann@example\.com has no account here yet/],
    ['no user created by the organisation', { organization: { allowedDomains: [], createUsers: false } }, /^ann@example\.com has no account here yet/],
    ['a suspended user', { linkedUser: { id: 'u1', status: 'suspended' } }, /^Your account is suspended\./],
    ['an email another user has', { usersWithEmail: [{ id: 'u2', status: 'active' }] }, /^Sign in with your usual provider, then link this one/],
  ])('%s', (_name, facts, sentence) => {
    const error = refusal(facts);
    expect(error.message).toMatch(sentence);
    expect(error.refusal?.why).toBeTruthy();
    expect(error.message).not.toContain(error.refusal!.why);
  });

  it('a malformed email is never called unverified, and the hostile value is not repeated', () => {
    const error = refusal({ profile: { email: undefined, emailProblem: 'has more than one @', emailVerified: false } });
    expect(error.message).not.toMatch(/verif/i);
    expect(error.refusal).toEqual({ reason: 'email_malformed', why: 'the email Corp sent has more than one @' });
  });

  it('a provider’s own claim check refuses through the same path (code, reason, sentence)', () => {
    const error = signInRefused('hosted_domain_not_allowed', 'the account’s hosted domain is other.example, not corp.example', { provider: 'Google', domain: 'corp.example' });
    expect(error.code).toBe('sign_in_not_allowed');
    expect(error.status).toBe(403);
    expect(error.refusal?.reason).toBe('hosted_domain_not_allowed');
    expect(error.message).toBe('Your account at Google is not in the corp.example organisation allowed here. Contact your administrator if you think it should.');
  });

  it('every reason has a catalogue code and a sentence of its own words', () => {
    for (const reason of signInRefusalReasons) {
      const error = signInRefused(reason, 'why', { provider: 'Corp', email: 'ann@example.com', domain: 'example.com' });
      expect(error.code).toBe(refusalCodes[reason]);
      expect(error.message.length).toBeGreaterThan(20);
    }
  });
});
