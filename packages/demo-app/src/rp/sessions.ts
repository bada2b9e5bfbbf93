import { randomBytes } from 'node:crypto';

import type { IDToken, UserInfoResponse } from 'openid-client';

/** What the demo keeps of a person signed in with Gatehouse. */
export interface RpSession {
  claims: IDToken;
  userinfo: UserInfoResponse | undefined;
  /** Sent back as `id_token_hint` at sign-out. */
  idToken: string;
  createdAt: number;
}

/** A sign-in under way: what the callback must find again (PKCE verifier, state, nonce). */
export interface PendingSignIn {
  codeVerifier: string;
  state: string;
  nonce: string;
  createdAt: number;
}

/** A signed-in session lasts at most this long here, whatever the OP says. */
const SESSION_MS = 8 * 60 * 60 * 1000;
/** A sign-in not finished within this time is forgotten. */
const PENDING_MS = 10 * 60 * 1000;

/** A random cookie value: 256 bits, so it cannot be guessed. */
export function randomId(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The demo's own sessions, server-side: the browser holds only a random id, so nothing about the
 * person or their tokens travels in a cookie. In memory: a restart signs everyone out of the demo.
 */
export class RpSessions {
  private readonly sessions = new Map<string, RpSession>();
  private readonly pending = new Map<string, PendingSignIn>();

  startSignIn(signIn: Omit<PendingSignIn, 'createdAt'>): string {
    this.sweep();
    const id = randomId();
    this.pending.set(id, { ...signIn, createdAt: Date.now() });
    return id;
  }

  /** The pending sign-in, once: a second callback with the same cookie finds nothing. */
  takeSignIn(id: string | undefined): PendingSignIn | undefined {
    if (id === undefined) return undefined;
    const signIn = this.pending.get(id);
    this.pending.delete(id);
    return signIn && Date.now() - signIn.createdAt < PENDING_MS ? signIn : undefined;
  }

  create(session: Omit<RpSession, 'createdAt'>): string {
    this.sweep();
    const id = randomId();
    this.sessions.set(id, { ...session, createdAt: Date.now() });
    return id;
  }

  get(id: string | undefined): RpSession | undefined {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (session && Date.now() - session.createdAt >= SESSION_MS) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  delete(id: string | undefined): RpSession | undefined {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    return session;
  }

  /**
   * Back-Channel Logout §2.7: with a `sid`, the sessions of that OP session (of that `sub` too when the
   * token names one); with only a `sub`, every session of that person. Returns how many ended.
   */
  endByLogoutToken({ sid, sub }: { sid?: string; sub?: string }): number {
    let ended = 0;
    for (const [id, session] of this.sessions) {
      const matches = sid !== undefined ? session.claims.sid === sid && (sub === undefined || session.claims.sub === sub) : session.claims.sub === sub;
      if (matches) {
        this.sessions.delete(id);
        ended++;
      }
    }
    return ended;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, signIn] of this.pending) if (now - signIn.createdAt >= PENDING_MS) this.pending.delete(id);
    for (const [id, session] of this.sessions) if (now - session.createdAt >= SESSION_MS) this.sessions.delete(id);
  }
}
