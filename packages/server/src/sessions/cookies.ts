import { parseCookie } from 'cookie';
import type { CookieSerializeOptions } from '@fastify/cookie';

/**
 * Cookie names and attributes. Over https the `__Host-` prefix makes the browser refuse the cookie
 * unless it is Secure, host-only and Path=/, so a sibling subdomain cannot plant or shadow it.
 * SameSite=Lax is always explicit (browsers' defaults differ).
 */
export interface CookieNames {
  session: string;
  /** Binds a sign-in attempt to the browser that started it (login CSRF defence). */
  signInBinding: string;
  /** On an app host: its own session token (host-only, never forwarded upstream). */
  appSession: string;
  /** On an app host: binds the portal handshake to the browser that started it. */
  appState: string;
  /** The `state` sent with an RP-initiated logout, to recognise this browser when the IdP sends it back. */
  signOutState: string;
  /**
   * Set by an app's RP-initiated logout that goes through the IdP's logout: the signed way back to the
   * app's post-logout URI, redeemed once at /signed-out (provide/logoutContinuation.ts).
   */
  logoutContinuation: string;
  /** Set by "Switch account": the next sign-in asks the IdP to let the person choose (one use). */
  chooseAccount: string;
}

export function cookieNames(secure: boolean): CookieNames {
  const prefix = secure ? '__Host-' : '';
  return {
    session: `${prefix}gatehouse_session`,
    signInBinding: `${prefix}gatehouse_signin`,
    appSession: `${prefix}gatehouse_app`,
    appState: `${prefix}gatehouse_app_state`,
    signOutState: `${prefix}gatehouse_signout`,
    logoutContinuation: `${prefix}gatehouse_logout_continue`,
    chooseAccount: `${prefix}gatehouse_choose_account`,
  };
}

export function cookieOptions(secure: boolean, maxAgeSeconds?: number): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

/** Every cookie name Gatehouse uses, in both spellings: removed from what goes upstream. */
export const ALL_COOKIE_NAMES: ReadonlySet<string> = new Set(
  [false, true].flatMap((secure) => Object.values(cookieNames(secure))),
);

/**
 * One cookie's value from a Cookie header, for code that runs without a Fastify request (the hot path
 * reads one cookie per request). It answers exactly as the cookie library's parser, which it falls back
 * to for anything but the plain case: the name's first occurrence in the header starts a pair and is
 * followed by `=`, and the value has nothing to trim or decode. That case needs no parse of the rest.
 */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  const at = cookieHeader.indexOf(name);
  if (at === -1) return undefined;
  if (cookieHeader.charCodeAt(at + name.length) === EQUALS && startsPair(cookieHeader, at)) {
    const from = at + name.length + 1;
    const end = cookieHeader.indexOf(';', from);
    const value = cookieHeader.slice(from, end === -1 ? cookieHeader.length : end);
    if (value === '' || (!isBlank(value.charCodeAt(0)) && !isBlank(value.charCodeAt(value.length - 1)) && !value.includes('%'))) return value;
  }
  return parseCookie(cookieHeader)[name];
}

const EQUALS = 0x3d;
const SEMICOLON = 0x3b;

/** What the cookie parser trims around names and values. */
function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** Whether only blanks stand between `at` and the start of the header or the previous `;`. */
function startsPair(header: string, at: number): boolean {
  let index = at - 1;
  while (index >= 0 && isBlank(header.charCodeAt(index))) index--;
  return index === -1 || header.charCodeAt(index) === SEMICOLON;
}
