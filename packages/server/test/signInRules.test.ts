import { describe, expect, it } from 'vitest';
import { decideLink, decideSignIn, judgeSignIn, OPEN_ORGANIZATION, type LinkFacts, type SignInFacts } from '../src/accounts/signInRules.js';
import { AppError } from '../src/errors.js';

const provider = { name: 'Corp', allowedDomains: [] as string[], createUsers: true, trustEmail: false };
const verified = { email: 'ann@example.com', emailVerified: true };

function outcome(facts: Partial<SignInFacts>): string {
  try {
    const decision = decideSignIn({ provider, organization: OPEN_ORGANIZATION, profile: verified, usersWithEmail: [], ...facts });
    return decision.kind === 'create' ? 'create' : `${decision.kind}:${decision.userId}`;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

describe('first sign-in and linking rules', () => {
  it.each<[string, Partial<SignInFacts>, string]>([
    ['a linked identity signs into its user', { linkedUser: { id: 'u1', status: 'active' } }, 'existing:u1'],
    ['a linked identity of a suspended user is refused', { linkedUser: { id: 'u1', status: 'suspended' } }, 'account_suspended'],
    ['a new person is created', {}, 'create'],
    ['no verified email: refused', { profile: { email: 'ann@example.com', emailVerified: false } }, 'sign_in_not_allowed'],
    ['no email at all: refused', { profile: { email: undefined, emailVerified: true } }, 'sign_in_not_allowed'],
    ['domain not allowed', { provider: { ...provider, allowedDomains: ['corp.example'] } }, 'sign_in_not_allowed'],
    ['domain allowed', { provider: { ...provider, allowedDomains: ['example.com'] } }, 'create'],
    ['sub-domain is not the domain', { provider: { ...provider, allowedDomains: ['ample.com'] } }, 'sign_in_not_allowed'],
    ['domain list also binds linked identities', { provider: { ...provider, allowedDomains: ['corp.example'] }, linkedUser: { id: 'u1', status: 'active' } }, 'sign_in_not_allowed'],
    ['unknown people are not created when the provider says so', { provider: { ...provider, createUsers: false } }, 'sign_in_not_allowed'],
    // Threat: account takeover by an IdP that asserts someone else's email.
    ['email of another user, untrusted provider: conflict', { usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'identity_conflict'],
    ['email of another user, trusted provider: linked', { provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'link:u2'],
    ['trusted provider, but that user is suspended', { provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'suspended' }] }, 'account_suspended'],
    ['trusted provider, ambiguous email owner: conflict', { provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }, { id: 'u3', status: 'active' }] }, 'identity_conflict'],
    ['trusted provider, unverified email never links', { provider: { ...provider, trustEmail: true }, profile: { email: 'ann@example.com', emailVerified: false }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'sign_in_not_allowed'],
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
    ['organisation domain refuses a new person', org(['corp.example'], true), 'sign_in_not_allowed'],
    ['organisation domain refuses a linked identity too', { ...org(['corp.example'], true), linkedUser: { id: 'u1', status: 'active' } }, 'sign_in_not_allowed'],
    ['organisation domain refuses an email link too', { ...org(['corp.example'], true), provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'sign_in_not_allowed'],
    ['organisation creates nobody', org([], false), 'sign_in_not_allowed'],
    ['organisation creates nobody, but known people still sign in', { ...org([], false), linkedUser: { id: 'u1', status: 'active' } }, 'existing:u1'],
    ['organisation creates nobody, a trusted email link still works', { ...org([], false), provider: { ...provider, trustEmail: true }, usersWithEmail: [{ id: 'u2', status: 'active' }] }, 'link:u2'],
    ['organisation would create, provider does not: refused', { ...org([], true), provider: { ...provider, createUsers: false } }, 'sign_in_not_allowed'],
    ['both domain lists must admit: provider refuses', { ...org(['example.com'], true), provider: { ...provider, allowedDomains: ['corp.example'] } }, 'sign_in_not_allowed'],
    ['both domain lists must admit: organisation refuses', { ...org(['corp.example'], true), provider: { ...provider, allowedDomains: ['example.com'] } }, 'sign_in_not_allowed'],
    ['both domain lists admit', { ...org(['example.com', 'corp.example'], true), provider: { ...provider, allowedDomains: ['example.com'] } }, 'create'],
    ['a verified email is still required', { ...org(['example.com'], true), profile: { email: 'ann@example.com', emailVerified: false } }, 'sign_in_not_allowed'],
  ])('%s', (_name, facts, expected) => {
    expect(outcome(facts)).toBe(expected);
  });

  it('a refusal names the rule that said no (for the console’s test sign-in), never throwing', () => {
    const judge = (facts: Partial<SignInFacts>) => judgeSignIn({ provider, organization: OPEN_ORGANIZATION, profile: verified, usersWithEmail: [], ...facts });
    expect(judge({ organization: { allowedDomains: ['corp.example'], createUsers: true } })).toEqual({
      kind: 'refused',
      code: 'sign_in_not_allowed',
      why: "example.com is not among the organisation's allowed domains",
      email: 'ann@example.com',
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
      if (error instanceof AppError) return error.code;
      throw error;
    }
  }

  it.each<[string, Partial<LinkFacts>, string]>([
    ['a new identity links', {}, 'link'],
    ['an identity already linked to this user is a no-op', { owner: { id: 'u1' } }, 'already-linked'],
    // Threat: account takeover. An identity of another user is never moved to this one.
    ['an identity of another user is refused', { owner: { id: 'u2' } }, 'identity_conflict'],
    ['no email match is needed (the person proved both accounts)', { profile: { email: 'other@partner.example', emailVerified: true } }, 'link'],
    ['the provider’s domain list still applies', { provider: { name: 'Corp', allowedDomains: ['corp.example'] } }, 'sign_in_not_allowed'],
    ['domain list with an unverified email', { provider: { name: 'Corp', allowedDomains: ['example.com'] }, profile: { email: 'ann@example.com', emailVerified: false } }, 'sign_in_not_allowed'],
    ['domain list satisfied', { provider: { name: 'Corp', allowedDomains: ['example.com'] } }, 'link'],
    ['the organisation’s domain list applies too', { organization: { allowedDomains: ['corp.example'], createUsers: true } }, 'sign_in_not_allowed'],
    ['the organisation’s domain list satisfied', { organization: { allowedDomains: ['example.com'], createUsers: true } }, 'link'],
    ['the organisation not creating users does not stop linking', { organization: { allowedDomains: [], createUsers: false } }, 'link'],
  ])('%s', (_name, facts, expected) => {
    expect(link(facts)).toBe(expected);
  });
});
