import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeEmail, parseEmail } from '@gatehouse/contract';
import { mapClaims } from '../../src/accounts/identityProfile.js';
import { OPEN_ORGANIZATION } from '../../src/accounts/admission.js';
import { judgeSignIn } from '../../src/accounts/signInRules.js';
import { policySchema } from '@gatehouse/contract';
import { evaluatePolicy } from '../../src/authorize/policy.js';
import { parseConfig } from '../../src/config/load.js';

/**
 * Threat class: an email checked in one form and used in another. Sign-in rules (allowedDomains,
 * linking by email), policies (`emails`, `domains`) and admin rights compare emails; if any step
 * shortens, trims, splits or case-folds an address, a hostile address can be judged as someone else's:
 * - truncation: 269 characters cut to 256 turned "…@example.com.attacker.org" into "…@example.com";
 * - Unicode case folding: "\u212Aate@example.com" (KELVIN SIGN) lower-cases to the ASCII
 *   "kate@example.com", so an IdP account that is another mailbox could be pre-linked to Kate's account;
 * - several "@": "a@evil.example@example.com" reads as either domain depending on who splits it.
 * One normaliser (the contract's definitions/email.ts) refuses all of these, and every comparison uses it.
 */
const provider = { claims: { email: 'email', emailVerified: 'email_verified', name: 'name', picture: 'picture', groups: 'groups' }, assumeEmailVerified: false };
const profileOf = (claims: Record<string, unknown>) => mapClaims(provider, { sub: 'someone', email_verified: true, ...claims });

const TOO_LONG = `${'a'.repeat(244)}@example.com.attacker.org`; // 269 characters
/** Characters Unicode lower-casing or NFKC maps onto ASCII letters. */
const FOLDS_TO_ASCII = ['\u212A', '\u212B', '\u0130', '\u017F', '\u0131', '\uFF4B', '\uFF21', '\u1E9E', '\uFB01', '\u2170', '\u24DA'];

describe('the email normaliser (the contract’s definitions/email.ts)', () => {
  it.each<[string, string]>([
    ['alice@example.com', 'alice@example.com'],
    ['Alice.Smith+tag@Example.COM', 'alice.smith+tag@example.com'],
    ["o'brien@mail.example.co.uk", "o'brien@mail.example.co.uk"],
    ['user@xn--bcher-kva.example', 'user@xn--bcher-kva.example'],
    ['user@example.xn--p1ai', 'user@example.xn--p1ai'],
    [`${'a'.repeat(64)}@example.com`, `${'a'.repeat(64)}@example.com`],
  ])('accepts %s as %s', (input, expected) => {
    expect(normalizeEmail(input)).toBe(expected);
  });

  it.each<[string, unknown]>([
    ['269 characters (cut to 256 it ended in @example.com)', TOO_LONG],
    ['255 characters', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`],
    ['a local part of 65 characters', `${'a'.repeat(65)}@example.com`],
    ['several @', 'a@evil.example@example.com'],
    ['a quoted local part hiding an @', '"a@evil.example"@example.com'],
    ['an empty local part', '@example.com'],
    ['an empty domain', 'alice@'],
    ['no @', 'alice.example.com'],
    ['leading whitespace', ' alice@example.com'],
    ['trailing newline', 'alice@example.com\n'],
    ['a tab', 'alice\t@example.com'],
    ['a NUL', 'alice\u0000@example.com'],
    ['a comma (two addresses in a header)', 'alice@example.com,bob@example.com'],
    ['angle brackets', '<alice@example.com>'],
    ['a domain with a trailing dot', 'alice@example.com.'],
    ['a single-label domain', 'alice@localhost'],
    ['an address literal', 'alice@[127.0.0.1]'],
    ['an all-digit top label', 'alice@10.0.0.1'],
    ['a label starting with a dash', 'alice@-example.com'],
    ['an empty label', 'alice@example..com'],
    ['a dot at the start of the local part', '.alice@example.com'],
    ['two dots in the local part', 'al..ice@example.com'],
    ['KELVIN SIGN', '\u212Aate@example.com'],
    ['KELVIN SIGN in the domain', 'kate@exampl\u212A.com'],
    ['dotted capital I', '\u0130da@example.com'],
    ['long s', '\u017Fam@example.com'],
    ['fullwidth letters', 'ｋａｔｅ@example.com'],
    ['a fullwidth @', 'kate＠example.com'],
    ['a Unicode domain (not in A-label form)', 'kate@bücher.example'],
    ['not a string', 42],
    ['empty', ''],
  ])('refuses %s', (_label, input) => {
    const result = parseEmail(input);
    expect(result.ok).toBe(false);
    expect(normalizeEmail(input)).toBeUndefined();
  });

  it('is idempotent, and its output is ASCII lower case (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.emailAddress(), fc.string(), fc.string({ unit: 'binary' })), (input) => {
        const email = normalizeEmail(input);
        if (email === undefined) return;
        expect(normalizeEmail(email)).toBe(email);
        expect(/^[\x21-\x7e]+$/.test(email)).toBe(true);
        expect(email).toBe(email.toLowerCase());
        expect(email.length).toBeLessThanOrEqual(254);
        expect(email.split('@')).toHaveLength(2);
      }),
      { numRuns: 1000 },
    );
  }, 30_000);

  it('never maps an input with a non-ASCII character to an ASCII address (property)', () => {
    const ascii = fc.emailAddress();
    const withFold = fc.tuple(ascii, fc.nat(), fc.constantFrom(...FOLDS_TO_ASCII)).map(([email, at, char]) => {
      const i = at % (email.length + 1);
      return `${email.slice(0, i)}${char}${email.slice(i)}`;
    });
    fc.assert(
      fc.property(fc.oneof(withFold, fc.string({ unit: 'grapheme' })), (input) => {
        // eslint-disable-next-line no-control-regex -- "any character outside ASCII" is the point
        if (!/[^\u0000-\u007f]/.test(input)) return;
        expect(normalizeEmail(input)).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  }, 30_000);

  it('accepts every address whose NFKC + lower case is itself (no folding step is ever needed)', () => {
    fc.assert(
      fc.property(fc.emailAddress(), (input) => {
        const email = normalizeEmail(input);
        if (email !== undefined) expect(email.normalize('NFKC').toLowerCase()).toBe(email);
      }),
    );
  }, 30_000);
});

describe('an IdP’s email is checked whole (accounts/identityProfile.ts, signInRules.ts)', () => {
  const facts = (profile: ReturnType<typeof profileOf>, usersWithEmail: Array<{ id: string; status: 'active' | 'suspended' }> = []) => ({
    provider: { name: 'Contractor IdP', allowedDomains: ['example.com'], createUsers: true, trustEmail: true },
    organization: OPEN_ORGANIZATION,
    profile,
    usersWithEmail,
  });

  it('a 269-character email is not shortened into the allowed domain: the sign-in is refused with the reason', () => {
    const profile = profileOf({ email: TOO_LONG });
    expect(profile.email).toBeUndefined();
    expect(profile.emailProblem).toBe('longer than 254 characters');
    const verdict = judgeSignIn(facts(profile));
    expect(verdict).toMatchObject({ kind: 'refused', code: 'sign_in_not_allowed', why: 'the email Contractor IdP sent longer than 254 characters' });
  });

  it('a Kelvin-sign "Kate" is not linked to Kate’s account (trustEmail on)', () => {
    const profile = profileOf({ email: '\u212Aate@example.com' });
    expect(profile.email).toBeUndefined();
    const verdict = judgeSignIn(facts(profile, [{ id: 'kate', status: 'active' }]));
    expect(verdict.kind).toBe('refused');
  });

  it('several @ are refused, whichever side a domain rule would read', () => {
    const verdict = judgeSignIn(facts(profileOf({ email: 'mallory@attacker.org@example.com' })));
    expect(verdict).toMatchObject({ kind: 'refused', code: 'sign_in_not_allowed' });
  });

  it('a group or sid longer than 256 characters is dropped, never cut into another value', () => {
    const long = `${'admins'.padEnd(256, ' ')}x`;
    const profile = mapClaims(provider, { sub: 's', groups: [long, 'staff', ' admins'], sid: `${'s'.repeat(300)}` });
    expect(profile.groups).toEqual(['staff', ' admins']);
    expect(profile.groups).not.toContain('admins');
    expect(profile.sid).toBeUndefined();
  });

  it('too many groups are refused rather than cut (a deny rule could name one left out)', () => {
    const groups = Array.from({ length: 501 }, (_, i) => `g${i}`);
    expect(() => mapClaims(provider, { sub: 's', groups })).toThrow(/more than 500 groups/);
  });

  it('a picture URL too long to keep whole is dropped, not cut', () => {
    const profile = mapClaims(provider, { sub: 's', picture: `https://cdn.example/${'p'.repeat(3000)}` });
    expect(profile.picture).toBeUndefined();
  });
});

describe('policies and config use the same normaliser (authorize/policy.ts, config/schema.ts)', () => {
  it('a domains rule cannot be passed by a truncated or folded email: such emails never reach it', () => {
    const policy = policySchema.parse({ allow: [{ domains: ['example.com'] }] });
    for (const input of [TOO_LONG, 'a@attacker.org@example.com', 'kate@exampl\u212A.com']) {
      const email = normalizeEmail(input);
      expect(email).toBeUndefined();
    }
    // And what does reach it is compared as it is: the domain after the one @.
    expect(evaluatePolicy(policy, { email: 'a@example.com.attacker.org', groups: [], roles: [], claims: {} }).allow).toBe(false);
    expect(evaluatePolicy(policy, { email: 'a@example.com', groups: [], roles: [], claims: {} }).allow).toBe(true);
  });

  it.each(['\u212Aate@example.com', 'a@b@example.com', `${'a'.repeat(65)}@example.com`, 'kate@example.com.'])(
    'a policy listing %j is refused at load (never silently mapped to another address)',
    (email) => {
      expect(policySchema.safeParse({ allow: [{ emails: [email] }] }).success).toBe(false);
    },
  );

  it('a policy domain with a fold-to-ASCII character is refused', () => {
    expect(policySchema.safeParse({ allow: [{ domains: ['exampl\u212A.com'] }] }).success).toBe(false);
    expect(policySchema.parse({ allow: [{ domains: ['Example.COM'] }] }).allow[0]).toEqual({ domains: ['example.com'] });
  });

  it('admins.emails in the config: canonical form, fold-to-ASCII refused', () => {
    const config = parseConfig({ admins: { emails: [' Alice@Example.com '] } }, { env: {} });
    expect(config.admins.emails).toEqual(['alice@example.com']);
    expect(() => parseConfig({ admins: { emails: ['\u212Aate@example.com'] } }, { env: {} })).toThrow(/admins\.emails/);
  });
});
