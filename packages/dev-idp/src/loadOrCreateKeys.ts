import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { JWK } from 'oidc-provider';

/** Private signing keys (JWK) and cookie-signing secrets of one dev IdP. */
export interface DevIdpKeys {
  signingKeys: JWK[];
  cookieKeys: string[];
}

const FILE_NAME = 'dev-idp-keys.json';

function generateKeys(): DevIdpKeys {
  // RS256 signs ID tokens (the OIDC default alg). The ES256 key is published alongside, as real IdPs
  // publish several keys, so a relying party is exercised in picking the key by `kid`.
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  return {
    signingKeys: [
      { ...rsa, use: 'sig', alg: 'RS256' } as JWK,
      { ...ec, use: 'sig', alg: 'ES256' } as JWK,
    ],
    cookieKeys: [randomBytes(32).toString('base64url')],
  };
}

function isDevIdpKeys(value: unknown): value is DevIdpKeys {
  const keys = value as Partial<DevIdpKeys> | null;
  return (
    typeof keys === 'object' &&
    keys !== null &&
    Array.isArray(keys.signingKeys) &&
    keys.signingKeys.length > 0 &&
    Array.isArray(keys.cookieKeys) &&
    keys.cookieKeys.length > 0 &&
    keys.cookieKeys.every((key) => typeof key === 'string')
  );
}

/**
 * Fresh keys on every start, or, with a data directory, the keys saved there by the first start, so a
 * restart neither invalidates the ID tokens relying parties hold nor signs every browser out.
 * The file holds private keys: it is written owner-only, and a damaged file is an error rather than
 * something silently replaced.
 */
export async function loadOrCreateKeys(dataDir?: string): Promise<DevIdpKeys> {
  if (dataDir === undefined) return generateKeys();
  const file = join(dataDir, FILE_NAME);
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== undefined) {
    const stored: unknown = JSON.parse(text);
    if (!isDevIdpKeys(stored)) throw new Error(`dev-idp: ${file} is not a valid key file; delete it to generate new keys`);
    return stored;
  }
  const keys = generateKeys();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Write-then-rename so a crash never leaves a half-written key file behind.
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
  return keys;
}
