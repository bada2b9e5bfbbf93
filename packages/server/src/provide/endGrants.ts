import type { GrantFilter, OpGrant } from './opStore.js';

/** Who ends grants: the person themselves, an administrator, or Gatehouse (a session that ended). */
export interface GrantActor {
  by: 'user' | 'admin' | 'system';
  /** The person or administrator acting (null for Gatehouse). */
  userId: string | null;
  /** The Gatehouse session they act from (null for Gatehouse). */
  sessionId: string | null;
}

/**
 * Ends the grants the filter names that are live, with `reason`: their codes and tokens stop working on
 * every node, and each app that takes back-channel logout is owed a logout token. Answers the grants it
 * ended (none that had ended already). Every ending goes through this one function, which the
 * composition root builds (services.ts): the account center, the console and the session ties alike,
 * so none of them can end a grant and forget to tell the app.
 */
export type EndGrants = (filter: GrantFilter, reason: string, actor: GrantActor) => Promise<OpGrant[]>;
