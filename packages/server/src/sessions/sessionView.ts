import type { ProviderRef } from '@gatehouse/contract';
import { describeDevice } from './describeDevice.js';
import { SessionStore, type Session } from './sessionStore.js';
import { iso } from '../http/isoTime.js';

/**
 * A session as the account center and the admin console show it (the contract's sessionViewSchema):
 * its public handle, times, address, device and provider; never its secret or tokens. `lastSeenAt` is
 * passed when the request's own view of it is fresher than the row (the current session).
 */
export function sessionView(session: Session, provider: ProviderRef, lastSeenAt = session.last_seen_at) {
  return {
    id: session.id,
    createdAt: iso(session.created_at),
    lastSeenAt: iso(lastSeenAt),
    expiresAt: iso(SessionStore.expiresAt(session)),
    ip: session.ip,
    userAgent: session.user_agent,
    device: describeDevice(session.user_agent),
    provider,
  };
}
