import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from '../support/browser.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from '../support/hostileIdp.js';

/**
 * Threat class: emails that are not what they are checked as, through a real sign-in. An IdP (or its
 * user, where the IdP lets people choose their address) asserts an email that Gatehouse once shortened
 * or case-folded into another, allowed address: 269 characters cut to 256 ("…@example.com.attacker.org"
 * read as "…@example.com"), or a Kelvin sign lower-cased to an ASCII "k" and pre-linked to Kate's account.
 * The sign-in must be refused with the catalogue's answer, and no session or user created.
 */
describe('emails an IdP asserts are checked whole and never case-folded', () => {
  let idp: HostileIdp;
  let gatehouse: RunningGatehouse;

  beforeAll(async () => {
    idp = await startHostileIdp('gatehouse');
    gatehouse = await startGatehouse({
      providers: [
        {
          id: 'hostile',
          name: 'Hostile IdP',
          issuer: idp.issuer,
          clientId: 'gatehouse',
          clientSecret: 's',
          createUsers: true,
          trustEmail: true,
          allowedDomains: ['example.com'],
        },
      ],
    });
  });
  afterAll(async () => {
    await gatehouse?.close();
    await idp?.close();
  });

  async function signInAs(email: unknown) {
    idp.extraClaims = { email };
    const browser = new ScriptedBrowser();
    const start = await browser.request(`${gatehouse.url}/.gatehouse/sign-in/hostile`, { headers: { accept: 'text/html' } });
    const { hop } = await browser.follow(start);
    return { browser, hop };
  }

  const usersWith = (email: string) =>
    gatehouse.services.database.db.selectFrom('users').select('id').where('email', '=', email).execute();

  it('an email of the allowed domain signs in (the fixture itself works)', async () => {
    const { browser, hop } = await signInAs('mallory@example.com');
    expect(hop.status).toBe(200);
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeDefined();
  });

  it.each<[string, string]>([
    // 256 characters of it end in "@example.com": the cut value passed allowedDomains.
    ['a 269-character email whose first 256 characters end in @example.com', `${'a'.repeat(244)}@example.com.attacker.org`],
    ['several @', 'mallory@attacker.org@example.com'],
    ['a local part over 64 characters', `${'a'.repeat(65)}@example.com`],
    ['whitespace inside', 'mallory @example.com'],
    ['a trailing newline', 'mallory@example.com\n'],
    ['a fullwidth @', 'mallory＠example.com'],
  ])('refuses %s', async (_label, email) => {
    const { browser, hop } = await signInAs(email);
    expect(hop.status).toBe(403);
    expect(hop.body).toContain('Sign-in not allowed');
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeUndefined();
  });

  it('the 269-character email is never stored in a shortened form', async () => {
    await signInAs(`${'b'.repeat(244)}@example.com.attacker.org`);
    expect(await usersWith(`${'b'.repeat(244)}@example.com`)).toEqual([]);
  });

  // Threat: pre-linking. Kate has an account; an IdP account whose address is "Kate" spelt with the
  // KELVIN SIGN (a different mailbox to the IdP) lower-cased to kate@example.com and, with trustEmail,
  // was linked to her account.
  it.each<[string, string]>([
    ['KELVIN SIGN (U+212A)', '\u212Aate@example.com'],
    ['LATIN CAPITAL I WITH DOT (U+0130)', '\u0130da@example.com'],
    ['LONG S (U+017F)', '\u017Fam@example.com'],
    ['fullwidth letters', 'ｋate@example.com'],
    ['a dotless i', 'kat\u0131e@example.com'],
  ])('refuses an email with a %s rather than mapping it to ASCII', async (_label, email) => {
    const before = await gatehouse.services.database.db.selectFrom('users').select('id').execute();
    const { browser, hop } = await signInAs(email);
    expect(hop.status).toBe(403);
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeUndefined();
    expect(await gatehouse.services.database.db.selectFrom('users').select('id').execute()).toHaveLength(before.length);
  });
});
