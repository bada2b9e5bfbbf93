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
}

export function cookieNames(secure: boolean): CookieNames {
  const prefix = secure ? '__Host-' : '';
  return {
    session: `${prefix}gatehouse_session`,
    signInBinding: `${prefix}gatehouse_signin`,
    appSession: `${prefix}gatehouse_app`,
    appState: `${prefix}gatehouse_app_state`,
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

/** One cookie's value from a Cookie header, for code that runs without a Fastify request. */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  return cookieHeader ? parseCookie(cookieHeader)[name] : undefined;
}
