import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config/schema.js';
import { ensurePrivateDir, tightenIfExists, type PermissionWarning } from './storage/filePermissions.js';

export interface Secrets {
  /** HMAC key for CSRF tokens and other values Gatehouse signs for itself. */
  cookieKey: Buffer;
  /** AES-256-GCM keys by id; `currentKeyId` encrypts, every listed key decrypts (rotation). */
  encryptionKeys: Map<string, Buffer>;
  currentKeyId: string;
}

export class SecretError extends Error {}

const TOO_SHORT = 'must be at least 32 random bytes (base64 or hex)';
const NOT_AES_256 = 'must be exactly 32 bytes (AES-256)';

/** A key's bytes: base64, base64url or hex. */
function keyBytes(value: string): Buffer {
  const trimmed = value.trim();
  return /^[0-9a-fA-F]+$/.test(trimmed) && trimmed.length % 2 === 0 ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Accepts base64, base64url or hex; keys must carry at least 256 bits. */
export function decodeKey(value: string, what: string): Buffer {
  const bytes = keyBytes(value);
  if (bytes.length < 32) throw new SecretError(`${what} ${TOO_SHORT}`);
  return bytes;
}

/**
 * Every problem of the keys the configuration gives, at once, each with its key's path (check-config):
 * what `loadSecrets` refuses at start, one at a time.
 */
export function secretProblems(config: Config): Array<{ path: Array<string | number>; message: string }> {
  const problems: Array<{ path: Array<string | number>; message: string }> = [];
  if (config.secrets.cookieKey && keyBytes(config.secrets.cookieKey).length < 32) problems.push({ path: ['secrets', 'cookieKey'], message: TOO_SHORT });
  for (const [index, { key }] of (config.secrets.encryptionKeys ?? []).entries()) {
    const length = keyBytes(key).length;
    if (length !== 32) problems.push({ path: ['secrets', 'encryptionKeys', index, 'key'], message: length < 32 ? TOO_SHORT : NOT_AES_256 });
  }
  return problems;
}

interface StoredDevSecrets {
  cookieKey: string;
  encryptionKey: string;
}

/**
 * Production takes its keys from the configuration (the schema refuses to start without them).
 * Development generates keys once and keeps them in the data folder, so sessions survive restarts.
 */
export function loadSecrets(config: Config): Secrets {
  let cookieKey = config.secrets.cookieKey ? decodeKey(config.secrets.cookieKey, 'secrets.cookieKey') : undefined;
  const encryptionKeys = new Map<string, Buffer>();
  for (const [index, { id, key }] of (config.secrets.encryptionKeys ?? []).entries()) {
    const bytes = decodeKey(key, `secrets.encryptionKeys[${index}].key`);
    if (bytes.length !== 32) throw new SecretError(`secrets.encryptionKeys[${index}].key ${NOT_AES_256}`);
    encryptionKeys.set(id, bytes);
  }
  let currentKeyId = config.secrets.encryptionKeys?.[0]?.id;

  if (!cookieKey || !currentKeyId) {
    if (config.mode === 'production') throw new SecretError('secrets.cookieKey and secrets.encryptionKeys are required in production mode');
    const dev = developmentSecrets(config.dataDir);
    cookieKey ??= Buffer.from(dev.cookieKey, 'base64url');
    if (!currentKeyId) {
      currentKeyId = 'dev';
      encryptionKeys.set(currentKeyId, Buffer.from(dev.encryptionKey, 'base64url'));
    }
  }
  return { cookieKey, encryptionKeys, currentKeyId };
}

/** Development keys are a secret like production ones: the folder 0700, the file 0600 (storage/filePermissions.ts). */
function developmentSecrets(dataDir: string): StoredDevSecrets {
  const file = path.join(dataDir, 'dev-secrets.json');
  const warn: PermissionWarning = (_details, message) => process.emitWarning(message);
  if (existsSync(file)) {
    tightenIfExists(file, warn);
    return JSON.parse(readFileSync(file, 'utf8')) as StoredDevSecrets;
  }
  // An existing folder others can read is reported by openDatabase, to the log.
  ensurePrivateDir(dataDir, () => {});
  const secrets: StoredDevSecrets = {
    cookieKey: randomBytes(32).toString('base64url'),
    encryptionKey: randomBytes(32).toString('base64url'),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
  return secrets;
}
