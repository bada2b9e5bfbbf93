import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Secrets } from '../secrets.js';

/**
 * Encrypts the IdP's tokens at rest with AES-256-GCM. The associated data names the session and the
 * token's purpose, so a ciphertext copied into another session's row (or from the refresh-token column
 * to the ID-token column) fails to decrypt. The key id travels with the ciphertext so keys can rotate:
 * `v1.<keyId>.<iv>.<ciphertext+tag>`, each part base64url.
 */
export interface TokenCipher {
  encrypt(plaintext: string, context: string): string;
  /** Returns undefined for anything that does not decrypt (unknown key, tampering, wrong context). */
  decrypt(sealed: string, context: string): string | undefined;
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createTokenCipher(secrets: Pick<Secrets, 'encryptionKeys' | 'currentKeyId'>): TokenCipher {
  const currentKey = secrets.encryptionKeys.get(secrets.currentKeyId);
  if (!currentKey) throw new Error(`encryption key "${secrets.currentKeyId}" is missing`);
  return {
    encrypt(plaintext, context) {
      return [VERSION, secrets.currentKeyId, sealAesGcm(currentKey, plaintext, context)].join('.');
    },
    decrypt(sealed, context) {
      const [version, keyId, ivPart, bodyPart, ...rest] = sealed.split('.');
      if (version !== VERSION || !keyId || !ivPart || !bodyPart || rest.length > 0) return undefined;
      const key = secrets.encryptionKeys.get(keyId);
      return key && openAesGcm(key, `${ivPart}.${bodyPart}`, context);
    },
  };
}

/**
 * AES-256-GCM under `key` with `context` as the associated data: `<iv>.<ciphertext+tag>`, base64url.
 * Synchronous on purpose: the same through WebCrypto (jose's JWE) costs a thread-pool round trip and a
 * key import per call, about 130 µs of CPU against 10 here for a few hundred bytes.
 */
export function sealAesGcm(key: Uint8Array, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${iv.toString('base64url')}.${body.toString('base64url')}`;
}

/** What sealAesGcm sealed under this key and context; undefined for anything else (another key or context, tampering, a malformed value). */
export function openAesGcm(key: Uint8Array, sealed: string, context: string): string | undefined {
  const [ivPart, bodyPart, ...rest] = sealed.split('.');
  if (!ivPart || !bodyPart || rest.length > 0) return undefined;
  const iv = Buffer.from(ivPart, 'base64url');
  const body = Buffer.from(bodyPart, 'base64url');
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
