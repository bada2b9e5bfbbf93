import { z } from 'zod';

/**
 * The one email normaliser: every email Gatehouse compares or stores goes through `parseEmail` — the
 * address an IdP asserts (sign-in rules, linking, the user's primary email, what apps receive), the
 * `emails` and `domains` of policies, `admins.emails` in the config, the sign-in domain lists. Two
 * values are the same person only if they are the same string after this, and nothing else.
 *
 * Threats it answers:
 * - Unicode case folding. `"\u212Aate@example.com"` (KELVIN SIGN) lower-cases to the ASCII
 *   `kate@example.com`, as do U+0130, U+017F `ſ` and the fullwidth letters under NFKC: an IdP that
 *   treats them as another mailbox would let its user be pre-linked to Kate's account. Anything outside
 *   printable ASCII is refused, never mapped; only A–Z are lower-cased.
 * - Truncation and ambiguity. Nothing is cut, trimmed or split: too long (RFC 5321 §4.5.3.1: 64 for
 *   the local part, 254 in all), several `@`, an empty side, whitespace, control characters, quoted
 *   local parts, address literals or a domain that is not a DNS name are refused, so a domain check
 *   always reads the domain the address really has.
 */

export const MAX_EMAIL_LENGTH = 254;
export const MAX_LOCAL_PART_LENGTH = 64;
const MAX_DOMAIN_LENGTH = 253;

export type EmailParseResult = { ok: true; email: string } | { ok: false; reason: string };

/**
 * RFC 5322 dot-atom (no quoted strings, no comments): atext runs separated by single dots. Printable
 * ASCII only, checked before this runs.
 */
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** One LDH label (RFC 1035 §2.3.1, RFC 5890 A-labels included): 1–63 characters, no dash at either end. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A top-level label: letters, or an IDNA A-label (`xn--…`); never all digits (that reads as an IPv4 address). */
const TOP_LABEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
/** Printable ASCII without the space: anything else is refused before any case mapping. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/** The email in its one canonical form (ASCII, lower case), or why it cannot be one. */
export function parseEmail(value: unknown): EmailParseResult {
  if (typeof value !== 'string' || value.length === 0) return { ok: false, reason: 'no email' };
  // Length first, on the value as given: a longer address is refused whole, never shortened.
  if (value.length > MAX_EMAIL_LENGTH) return { ok: false, reason: `longer than ${MAX_EMAIL_LENGTH} characters` };
  if (!PRINTABLE_ASCII.test(value)) return { ok: false, reason: 'contains whitespace, control or non-ASCII characters' };
  const at = value.indexOf('@');
  if (at === -1) return { ok: false, reason: 'has no @' };
  if (value.indexOf('@', at + 1) !== -1) return { ok: false, reason: 'has more than one @' };
  // ASCII-only lower-casing: the input is ASCII, so this maps exactly A–Z and nothing else.
  const email = value.toLowerCase();
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local.length === 0) return { ok: false, reason: 'has an empty local part' };
  if (local.length > MAX_LOCAL_PART_LENGTH) return { ok: false, reason: `has a local part longer than ${MAX_LOCAL_PART_LENGTH} characters` };
  if (!LOCAL_PART.test(local)) return { ok: false, reason: 'has a local part that is not a plain dot-atom' };
  if (!isEmailDomain(domain)) return { ok: false, reason: 'has a domain that is not a DNS name such as example.com' };
  return { ok: true, email };
}

/** The canonical email, or undefined when the value is not one (see `parseEmail` for why). */
export function normalizeEmail(value: unknown): string | undefined {
  const result = parseEmail(value);
  return result.ok ? result.email : undefined;
}

/**
 * Whether a value is a domain as `parseEmail` accepts it after the `@` (lower-case LDH labels, at
 * least two, a letter or `xn--` top label, at most 253 characters, no trailing dot). Used for the
 * domain lists too, so a listed domain and an email's domain are written the same way.
 */
export function isEmailDomain(domain: string): boolean {
  if (domain.length === 0 || domain.length > MAX_DOMAIN_LENGTH) return false;
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  const top = labels[labels.length - 1]!;
  return TOP_LABEL.test(top) && labels.every((label) => LABEL.test(label));
}

/** A domain as written in a list (`allowedDomains`, a policy's `domains`): the same rules, same case mapping. */
export function normalizeEmailDomain(value: unknown): string | undefined {
  if (typeof value !== 'string' || !PRINTABLE_ASCII.test(value)) return undefined;
  const domain = value.toLowerCase();
  return isEmailDomain(domain) ? domain : undefined;
}

/**
 * Config and API input (zod): an email or a domain, refused with the reason rather than mapped. Written
 * by operators, so surrounding spaces are forgiven; nothing inside the value is.
 */
export const emailSchema = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const result = parseEmail(value);
    if (result.ok) return result.email;
    ctx.addIssue({ code: 'custom', message: `must be an email address such as ann@example.com (this one ${result.reason})` });
    return z.NEVER;
  });

export const emailDomainSchema = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const domain = normalizeEmailDomain(value);
    if (domain !== undefined) return domain;
    ctx.addIssue({ code: 'custom', message: 'must be a domain such as example.com' });
    return z.NEVER;
  });

/** The domain of a canonical email (exactly one `@`, checked by `parseEmail`). */
export function emailDomainOf(email: string): string {
  return email.slice(email.indexOf('@') + 1);
}
