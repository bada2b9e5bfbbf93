import { createHash, randomBytes } from 'node:crypto';

/**
 * Session secrets are 256 random bits, sent only in the cookie and stored only as a SHA-256 hash, so a
 * read of the database yields no usable cookie. A plain hash (no salt, no slow KDF) is right here: the
 * input is uniformly random and far too large to guess, and lookups must be one indexed query.
 */
export const SECRET_BYTES = 32;

export function newSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/** The public handle APIs show for a session: random too, and unrelated to the secret. */
export function newPublicId(): string {
  return randomBytes(16).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** The length of a secret in base64url: 32 bytes, no padding. */
export const SECRET_LENGTH = 43;

/** Cookie values we issued are exactly 43 base64url characters; anything else is not looked up at all. */
export function isWellFormedSecret(value: string | undefined): value is string {
  return typeof value === 'string' && value.length === SECRET_LENGTH && /^[A-Za-z0-9_-]+$/.test(value);
}
