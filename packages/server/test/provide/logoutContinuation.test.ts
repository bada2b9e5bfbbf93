import { randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { OidcClientApp } from '../../src/provide/clients.js';
import { derivedKey } from '../../src/provide/configuration.js';
import { logoutContinuations, type LogoutContinuations } from '../../src/provide/logoutContinuation.js';
import { OpStore } from '../../src/provide/opStore.js';
import { openDatabase } from '../../src/storage/database.js';

/**
 * The way back to an app after its RP-initiated logout went through the IdP's logout: signed, bound to
 * the sign-out's IdP state, single-use on the database, short-lived, and to a URI the app still has
 * registered when it is redeemed.
 */
const ISSUER = 'https://gatehouse.example.com';
const URI = 'https://grafana.example.com/login';
const secretKey = randomBytes(32);

let handle: Awaited<ReturnType<typeof openDatabase>>;
let now: number;
let registered: string[];
let continuations: LogoutContinuations;

const clients = {
  client: (clientId: string) =>
    clientId === 'grafana' ? ({ clientId, app: { id: 'grafana' }, oidc: { postLogoutRedirectUris: registered } } as unknown as OidcClientApp) : undefined,
};

const make = (key = secretKey) => logoutContinuations({ secretKey: key, issuer: ISSUER, clients, redeemed: new OpStore(handle.db, () => now), now: () => now });
const issue = ({ state = 'app-state' as string | undefined, idpState = 'idp-state' } = {}) => continuations.issue({ clientId: 'grafana', postLogoutRedirectUri: URI, state, idpState });

beforeEach(async () => {
  handle = await openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} }));
  now = Date.now();
  registered = [URI];
  continuations = make();
});

afterEach(async () => {
  await handle.close();
});

describe('logout continuations', () => {
  it('redeem to the registered post-logout URI with the app’s state, or without a state when the app sent none', async () => {
    expect(await continuations.redeem(await issue(), 'idp-state')).toEqual({ location: `${URI}?state=app-state` });
    expect(await continuations.redeem(await continuations.issue({ clientId: 'grafana', postLogoutRedirectUri: URI, state: undefined, idpState: 'idp-state' }), 'idp-state')).toEqual({ location: URI });
  });

  it('are redeemed once', async () => {
    // Threat: a continuation replayed (copied from a cookie jar, a second tab) to send a browser on again.
    const token = await issue();
    expect(await continuations.redeem(token, 'idp-state')).toHaveProperty('location');
    expect(await continuations.redeem(token, 'idp-state')).toEqual({ refused: 'the continuation was used already' });
    // Once across nodes too: another process of the same server on the same database.
    expect(await make().redeem(token, 'idp-state')).toEqual({ refused: 'the continuation was used already' });
  });

  it('are redeemed only at the end of their own sign-out', async () => {
    // Threat: a continuation carried to another browser or another sign-out, whose IdP state differs.
    expect(await continuations.redeem(await issue(), 'another-idp-state')).toEqual({ refused: 'the continuation belongs to another sign-out' });
  });

  it('refuse a continuation altered, forged with another key, unsigned or of another type', async () => {
    // Threat: an open redirect through /signed-out, a continuation written by anyone to send people anywhere.
    const token = await issue();
    const [header, , signature] = token.split('.');
    const altered = Buffer.from(JSON.stringify({ ...decodeJwt(token), uri: 'https://evil.example/' })).toString('base64url');
    const refused = { refused: 'not a valid continuation (forged, altered or expired)' };
    expect(await continuations.redeem(`${header}.${altered}.${signature}`, 'idp-state')).toEqual(refused);
    expect(await make(randomBytes(32)).redeem(token, 'idp-state')).toEqual(refused);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'gatehouse-logout-continuation+jwt' })).toString('base64url')}.${token.split('.')[1]}.`;
    expect(await continuations.redeem(unsigned, 'idp-state')).toEqual(refused);
    // The same key and claims under another JWT type (any other token the server signs) is not one.
    const otherType = await new SignJWT(decodeJwt(token)).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(derivedKey(secretKey, 'logout-continuation'));
    expect(await continuations.redeem(otherType, 'idp-state')).toEqual(refused);
    expect(await continuations.redeem('not a token', 'idp-state')).toEqual(refused);
  });

  it('expire after ten minutes', async () => {
    // Threat: a continuation left in a browser sending it on long after the sign-out.
    const token = await issue();
    now += 10 * 60_000 + 1_000;
    expect(await continuations.redeem(token, 'idp-state')).toEqual({ refused: 'not a valid continuation (forged, altered or expired)' });
  });

  it('go only to a URI the app still has registered when redeemed', async () => {
    // Threat: a post-logout URI removed from the app (a domain given up, taken over) still used meanwhile.
    const token = await issue();
    registered = ['https://grafana.example.com/other'];
    expect(await continuations.redeem(token, 'idp-state')).toEqual({ refused: 'the post-logout URI is no longer registered for the app' });
    registered = [URI];
    // Refused before it was recorded as used: nothing was consumed by the refusal.
    expect(await continuations.redeem(token, 'idp-state')).toHaveProperty('location');
  });
});
