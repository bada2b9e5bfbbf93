import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser, submitIdpLogin } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { logLines } from './support/logLines.js';

/**
 * A refused sign-in, for real, through the development IdP process: the audit event and the log line
 * carry the reason the rules computed, and the page names the real reason (issue #17, "Clearer
 * refusals"). The dev IdP is given people whose accounts break one rule each.
 */
let idp: DevIdpProcess;
let gatehouse: RunningGatehouse;
let portal: string;
const lines: Array<Record<string, unknown>> = [];

/** Threat: a hostile IdP account whose "email" has two @, to be read as either domain. */
const MALFORMED = 'mallory@evil.example@example.com';

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  idp = await startDevIdpProcess({
    redirectUris: [`${portal}/.gatehouse/callback/dev`],
    postLogoutRedirectUris: [`${portal}/signed-out`],
    users: [
      { login: 'erin', password: 'erin', name: 'Erin Unverified', email: 'erin@example.com', emailVerified: false },
      { login: 'mallory', password: 'mallory', name: 'Mallory Malformed', email: MALFORMED, emailVerified: true },
      { login: 'olga', password: 'olga', name: 'Olga Other', email: 'olga@other.example', emailVerified: true },
      { login: 'ann', password: 'ann', name: 'Ann Allowed', email: 'ann@example.com', emailVerified: true },
    ],
  });
  gatehouse = await startGatehouse({
    port,
    providers: [
      {
        id: 'dev',
        name: 'Development IdP',
        issuer: idp.issuer,
        clientId: 'gatehouse',
        clientSecret: 'gatehouse-dev-secret',
        createUsers: true,
        allowedDomains: ['example.com'],
      },
    ],
    logStream: logLines(lines),
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

/** Signs in at the dev IdP as `login` and returns Gatehouse's answer at the callback (a page, for a person). */
async function signInAs(login: string) {
  const browser = new ScriptedBrowser();
  const start = await browser.request(`${portal}/.gatehouse/sign-in/dev`);
  const { hop: form } = await browser.follow(start);
  const callbackUrl = await submitIdpLogin(browser, form, login, login);
  return browser.request(callbackUrl.href, { headers: { accept: 'text/html' } });
}

async function lastFailure() {
  const { events } = await gatehouse.services.audit.query({ type: 'sign_in_failed' }, 1, 1);
  return events[0]!;
}

/** The page's sentence, as a person reads it (entities decoded). */
function sentence(html: string): string {
  const paragraph = /<h1>[^<]*<\/h1>\s*<p>([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  return paragraph.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

describe('a refused sign-in says why: audit, log and page', () => {
  it.each([
    {
      login: 'erin',
      reason: 'email_unverified',
      why: 'Development IdP did not say the email is verified',
      page: 'Your account at Development IdP has no verified email (erin@example.com is not verified there). Verify it at Development IdP, then sign in again.',
    },
    {
      login: 'mallory',
      reason: 'email_malformed',
      why: 'the email Development IdP sent has more than one @',
      page: 'The email address your account at Development IdP sent is not one Gatehouse can use. Contact your administrator.',
    },
    {
      login: 'olga',
      reason: 'domain_not_allowed_by_provider',
      why: "other.example is not among Development IdP's allowed domains",
      page: 'other.example is not allowed for signing in with Development IdP. Contact your administrator if you think it should.',
    },
  ])('$reason', async ({ login, reason, why, page }) => {
    const answer = await signInAs(login);
    expect(answer.status).toBe(403);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    expect(sentence(answer.body)).toBe(page);
    expect(answer.body).toContain('<code>sign_in_not_allowed</code>');
    // The admins' sentence is never shown to the person.
    expect(sentence(answer.body)).not.toContain(why);

    const event = await lastFailure();
    expect(event).toMatchObject({ type: 'sign_in_failed', outcome: 'failure', providerId: 'dev' });
    expect(event.details).toEqual({ provider: { id: 'dev', name: 'Development IdP' }, code: 'sign_in_not_allowed', reason, why });

    const reference = /Reference <code>([^<]+)<\/code>/.exec(answer.body)![1];
    const logged = lines.find((line) => line.reference === reference);
    expect(logged).toMatchObject({ level: 30, code: 'sign_in_not_allowed', status: 403, reason, why });
    // Threat: tokens in logs. The log line of a refusal carries no token of any kind.
    expect(JSON.stringify(logged)).not.toMatch(/eyJ|refresh_token|access_token|id_token/);
  });

  it('a malformed email is not called unverified, and its hostile value is neither shown nor audited', async () => {
    const answer = await signInAs('mallory');
    expect(sentence(answer.body)).not.toMatch(/verif/i);
    expect(answer.body).not.toContain('evil.example');
    const event = await lastFailure();
    expect(JSON.stringify(event.details)).not.toContain('evil.example');
  });

  it('a person the rules admit still signs in (the refusals are the rules, not the setup)', async () => {
    const answer = await signInAs('ann');
    expect(answer.status).toBe(303);
    expect(answer.headers.getSetCookie().join('\n')).toMatch(/gatehouse_session=/);
  });
});
