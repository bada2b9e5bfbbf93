/**
 * "Sign in with Gatehouse": the demo app as an OpenID Connect relying party of Gatehouse, on
 * openid-client (certified RP library) and jose. Authorization code flow with PKCE (S256), state and
 * nonce; the ID token's signature checked; a server-side session behind a random cookie; RP-initiated
 * logout; back-channel logout.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createRemoteJWKSet } from 'jose';
import * as client from 'openid-client';

import { InvalidLogoutToken, SeenJtis, verifyLogoutToken } from './logoutToken.js';
import { homePage, mePage, problemPage, signedOutPage } from './pages.js';
import { RpSessions } from './sessions.js';

export interface SignInWithGatehouseOptions {
  /** Gatehouse's issuer identifier (the portal's origin); discovery is read from it. */
  issuer: string;
  clientId: string;
  /** Without a secret the demo is a public client (`none`), which PKCE protects. */
  clientSecret?: string;
  /** The demo's own origin, where people reach it directly, e.g. http://127.0.0.1:4182. */
  publicUrl: string;
  /** The same app behind Gatehouse's guard, linked from the home page. */
  guardedUrl?: string;
}

/** The paths the demo registers at Gatehouse (redirect, post-logout and back-channel logout URIs). */
export const RP_PATHS = { callback: '/callback', signedOut: '/signed-out', backchannelLogout: '/backchannel-logout' } as const;

const SESSION_COOKIE = 'demo_session';
const SIGN_IN_COOKIE = 'demo_sign_in';
const SCOPE = 'openid profile email groups';

/**
 * Answers on the demo's own host only (Fastify's host constraint): on the hosts Gatehouse guards, every
 * path stays the whoami page.
 */
export async function signInWithGatehouse(app: FastifyInstance, opts: SignInWithGatehouseOptions): Promise<void> {
  const publicUrl = new URL(opts.publicUrl);
  const issuer = new URL(opts.issuer);
  const constraints = { host: publicUrl.host };
  const redirectUri = new URL(RP_PATHS.callback, publicUrl).href;
  const postLogoutRedirectUri = new URL(RP_PATHS.signedOut, publicUrl).href;
  const secure = publicUrl.protocol === 'https:';
  const cookieOptions = { httpOnly: true, sameSite: 'lax', secure, path: '/' } as const;
  const sessions = new RpSessions();
  const seenJtis = new SeenJtis();

  // Discovery once, lazily and again after a failure: the demo may start before Gatehouse answers.
  let configuration: Promise<client.Configuration> | undefined;
  const discover = () => {
    configuration ??= client
      .discovery(issuer, opts.clientId, opts.clientSecret, opts.clientSecret ? client.ClientSecretBasic(opts.clientSecret) : client.None(), {
        // Plain http only to a loopback issuer (the development defaults and tests); anything else must be https.
        execute: [...(issuer.protocol === 'http:' && isLoopback(issuer.hostname) ? [client.allowInsecureRequests] : []), client.enableNonRepudiationChecks],
      })
      .catch((error: unknown) => {
        configuration = undefined;
        throw error;
      });
    return configuration;
  };
  // The OP's keys for logout tokens, fetched on first use and again for an unknown kid (rotation).
  let logoutKeys: ReturnType<typeof createRemoteJWKSet> | undefined;

  // The pages show claims: no scripts, no framing, never cached; forms post only here and to Gatehouse.
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply
      .code(status)
      .headers({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${issuer.origin}; base-uri 'none'; frame-ancestors 'none'`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      })
      .send(body);
  const unavailable = (reply: FastifyReply) =>
    html(reply, 503, problemPage('Gatehouse is not reachable', `The demo could not read Gatehouse's OpenID configuration at ${issuer.origin}. Try again in a moment.`));

  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 16 * 1024 });

  app.get('/', { constraints }, async (request, reply) => {
    const session = sessions.get(request.cookies[SESSION_COOKIE]);
    const signedInAs = session ? String(session.claims.email ?? session.claims.name ?? session.claims.sub) : undefined;
    return html(reply, 200, homePage({ guardedUrl: opts.guardedUrl, signedInAs }));
  });

  app.get('/login', { constraints }, async (_request, reply) => {
    let config: client.Configuration;
    try {
      config = await discover();
    } catch {
      return unavailable(reply);
    }
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const id = sessions.startSignIn({ codeVerifier, state, nonce });
    // SameSite=Lax: the cookie comes back on the top-level redirect from Gatehouse to the callback.
    return reply.setCookie(SIGN_IN_COOKIE, id, { ...cookieOptions, maxAge: 600 }).redirect(url.href, 303);
  });

  app.get(RP_PATHS.callback, { constraints }, async (request, reply) => {
    const signIn = sessions.takeSignIn(request.cookies[SIGN_IN_COOKIE]);
    reply.clearCookie(SIGN_IN_COOKIE, cookieOptions);
    // Threat: login CSRF, a code from someone else's sign-in pushed into this browser. Only a callback
    // of a sign-in this browser started (its cookie, its state) goes on.
    if (!signIn) return html(reply, 400, problemPage('Sign-in not recognised', 'This sign-in was not started in this browser, or took too long. Start again from the home page.'));
    let config: client.Configuration;
    try {
      config = await discover();
    } catch {
      return unavailable(reply);
    }
    // The URL judged is the one registered, built from the configured origin, never from the Host header.
    const currentUrl = new URL(request.url, publicUrl);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: signIn.codeVerifier,
        expectedState: signIn.state,
        expectedNonce: signIn.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      if (error instanceof client.AuthorizationResponseError && error.error === 'access_denied') {
        return html(reply, 403, problemPage('Sign-in refused', 'Gatehouse did not let you sign in to this app: its policy does not allow you, or you cancelled.'));
      }
      request.log.warn({ err: { name: (error as Error).name, code: (error as { code?: unknown }).code } }, 'sign-in with Gatehouse failed');
      return html(reply, 400, problemPage('Sign-in failed', 'Gatehouse\u2019s answer could not be verified, so you are not signed in. Start again from the home page.'));
    }
    const claims = tokens.claims()!;
    let userinfo: client.UserInfoResponse | undefined;
    try {
      // The subject must be the ID token's: a userinfo answer about someone else is refused.
      userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    } catch (error) {
      request.log.warn({ err: { name: (error as Error).name } }, 'userinfo failed');
    }
    const id = sessions.create({ claims, userinfo, idToken: tokens.id_token! });
    return reply.setCookie(SESSION_COOKIE, id, cookieOptions).redirect('/me', 303);
  });

  app.get('/me', { constraints }, async (request, reply) => {
    const session = sessions.get(request.cookies[SESSION_COOKIE]);
    if (!session) return reply.redirect('/', 303);
    return html(reply, 200, mePage(session));
  });

  // POST, not a link: a page elsewhere cannot sign the person out (the SameSite=Lax cookie is not sent
  // with a cross-site POST).
  app.post('/logout', { constraints }, async (request, reply) => {
    const session = sessions.delete(request.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, cookieOptions);
    if (!session) return reply.redirect('/', 303);
    let config: client.Configuration;
    try {
      config = await discover();
    } catch {
      return unavailable(reply);
    }
    // RP-Initiated Logout 1.0: Gatehouse ends its session too, tells the other apps, and sends the
    // browser back to this registered URI.
    const url = client.buildEndSessionUrl(config, { id_token_hint: session.idToken, post_logout_redirect_uri: postLogoutRedirectUri });
    return reply.redirect(url.href, 303);
  });

  app.get(RP_PATHS.signedOut, { constraints }, async (_request, reply) => html(reply, 200, signedOutPage()));

  // Back-Channel Logout 1.0 §2.5: Gatehouse posts logout_token; 200 when done, 400 for anything invalid.
  app.post<{ Body: Record<string, unknown> | undefined }>(RP_PATHS.backchannelLogout, { constraints, bodyLimit: 16 * 1024 }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const refuse = (description: string) => reply.code(400).send({ error: 'invalid_request', error_description: description });
    const token = request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ? request.body?.logout_token : undefined;
    if (typeof token !== 'string' || !token) return refuse('expected a form with logout_token');
    let config: client.Configuration;
    try {
      config = await discover();
    } catch {
      // Fail closed: without the OP's keys nothing is verified, so nothing is ended; the OP retries.
      return reply.code(503).send({ error: 'temporarily_unavailable', error_description: 'the OpenID configuration could not be read' });
    }
    const metadata = config.serverMetadata();
    if (!metadata.jwks_uri) return reply.code(503).send({ error: 'temporarily_unavailable', error_description: 'the OP publishes no jwks_uri' });
    logoutKeys ??= createRemoteJWKSet(new URL(metadata.jwks_uri));
    let subject;
    try {
      subject = await verifyLogoutToken(token, { issuer: metadata.issuer, clientId: opts.clientId, keys: logoutKeys });
    } catch (error) {
      if (error instanceof InvalidLogoutToken) return refuse(error.message);
      throw error;
    }
    // Threat: a captured logout token replayed (§2.6 step 8); its jti is acted on once.
    if (!seenJtis.firstSight(subject.jti, subject.exp)) return refuse('this logout token was already used (jti seen before)');
    const ended = sessions.endByLogoutToken(subject);
    request.log.info({ ended }, 'back-channel logout');
    return reply.code(200).send();
  });
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
