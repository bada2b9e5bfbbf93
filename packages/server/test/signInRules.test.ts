import { describe, expect, it } from 'vitest';
import { decideLink, decideSignIn, type LinkFacts, type SignInFacts } from '../src/accounts/signInRules.js';
import { AppError } from '../src/errors.js';

const provider = { name: 'Corp', allowedDomains: [] as string[], createUsers: true, trustEmail: false };
const verified = { email: 'ann@example.com', emailVerified: true };

function outcome(facts: Partial<SignInFacts>): string {
  try {
    const decision = decideSignIn({ provider, profile: verified, usersWithEmail: [], ...facts });
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

describe('linking rules (a signed-in user links another provider)', () => {
  function link(facts: Partial<LinkFacts>): string {
    try {
      return decideLink({ provider: { allowedDomains: [] }, profile: verified, userId: 'u1', ...facts }).kind;
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
    ['the provider’s domain list still applies', { provider: { allowedDomains: ['corp.example'] } }, 'sign_in_not_allowed'],
    ['domain list with an unverified email', { provider: { allowedDomains: ['example.com'] }, profile: { email: 'ann@example.com', emailVerified: false } }, 'sign_in_not_allowed'],
    ['domain list satisfied', { provider: { allowedDomains: ['example.com'] } }, 'link'],
  ])('%s', (_name, facts, expected) => {
    expect(link(facts)).toBe(expected);
  });
});
