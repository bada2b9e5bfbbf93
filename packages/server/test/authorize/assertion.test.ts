import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssertionSigner } from '../../src/authorize/assertion.js';
import { parseConfig } from '../../src/config/load.js';
import { SigningKeys } from '../../src/keys/signingKeys.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';

/**
 * The identity assertion (X-Gatehouse-Assertion) is signed with node:crypto, synchronously: what it
 * writes must be a JWS every JOSE library accepts, checked here with jose against the published keys.
 */
const ISSUER = 'https://gate.example';
const AUDIENCE = 'https://wiki.example';
const subject = { userId: 'user-1', email: 'ann@corp.example', name: 'Ann Ö. Example', groups: ['staff', 'wiki-editors'] };

let handle: DatabaseHandle;
let keys: SigningKeys;
const clock = 1_800_000_000;

beforeAll(async () => {
  handle = await openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} }));
  keys = new SigningKeys(handle.db, createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' }));
  await keys.load();
});
afterAll(async () => handle?.close());

describe('the identity assertion', () => {
  it('is an ES256 JWS that jose verifies with the published keys, with the claims an app reads', async () => {
    const signer = new AssertionSigner(keys, ISSUER, () => clock);
    const jwt = signer.assertion({}, subject, AUDIENCE);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', kid: keys.current().kid, typ: 'JWT' });
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(keys.publicJwks()), { issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'], currentDate: new Date(clock * 1000) });
    expect(payload).toEqual({ iss: ISSUER, aud: AUDIENCE, sub: 'user-1', email: 'ann@corp.example', name: 'Ann Ö. Example', groups: ['staff', 'wiki-editors'], iat: clock, exp: clock + 300 });
  });

  it('does not verify for another audience, after its five minutes, or with a byte of its signature changed', async () => {
    // Threat: an assertion issued for one app replayed to another, kept past its life, or forged.
    const signer = new AssertionSigner(keys, ISSUER, () => clock);
    const jwt = signer.assertion({}, subject, AUDIENCE);
    const jwks = createLocalJWKSet(keys.publicJwks());
    await expect(jwtVerify(jwt, jwks, { issuer: ISSUER, audience: 'https://other.example', currentDate: new Date(clock * 1000) })).rejects.toThrow();
    await expect(jwtVerify(jwt, jwks, { issuer: ISSUER, audience: AUDIENCE, currentDate: new Date((clock + 301) * 1000) })).rejects.toThrow();
    const [header, body, signature] = jwt.split('.');
    const flipped = Buffer.from(signature!, 'base64url');
    flipped[10] = flipped[10]! ^ 1;
    await expect(jwtVerify(`${header}.${body}.${flipped.toString('base64url')}`, jwks, { issuer: ISSUER, audience: AUDIENCE, currentDate: new Date(clock * 1000) })).rejects.toThrow();
  });

  it('is signed again when the groups it would say differ, and reused while they do not', () => {
    const signer = new AssertionSigner(keys, ISSUER, () => clock);
    const session = {};
    const first = signer.assertion(session, subject, AUDIENCE);
    expect(signer.assertion(session, subject, AUDIENCE)).toBe(first);
    const fewer = signer.assertion(session, { ...subject, groups: ['staff'] }, AUDIENCE);
    expect(fewer).not.toBe(first);
    return expect(jwtVerify(fewer, createLocalJWKSet(keys.publicJwks()), { currentDate: new Date(clock * 1000) }).then(({ payload }) => payload.groups)).resolves.toEqual(['staff']);
  });

  it('is reused only for the session object it was signed for, per app, and signed again near its expiry', () => {
    // Threat: an assertion outliving what it says: a session reloaded after a revocation or a claims
    // change is a new object, and must not be handed the old one's assertion.
    let now = clock;
    const signer = new AssertionSigner(keys, ISSUER, () => now);
    const session = {};
    const first = signer.assertion(session, subject, AUDIENCE);
    expect(signer.assertion({}, subject, AUDIENCE)).not.toBe(first);
    expect(signer.assertion(session, subject, 'https://other.example')).not.toBe(first);
    now = clock + 239; // 61 s left: still reused
    expect(signer.assertion(session, subject, AUDIENCE)).toBe(first);
    now = clock + 240; // a minute left: signed again
    expect(signer.assertion(session, subject, AUDIENCE)).not.toBe(first);
  });
});
