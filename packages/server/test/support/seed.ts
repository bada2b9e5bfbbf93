import type { Kysely } from 'kysely';
import type { Database } from '../../src/storage/schema.js';

/**
 * Writes Ann, an active user, and her one identity straight into the tables: for tests of what sits on
 * top of an account (sessions, the change feed) that need one to exist, not the sign-in that makes it.
 */
export async function seedAnn(db: Kysely<Database>, { subject = 's1', primary = true }: { subject?: string; primary?: boolean } = {}): Promise<void> {
  const now = Date.now();
  await db.insertInto('users').values({ id: 'u1', email: 'ann@example.com', name: 'Ann', picture: null, status: 'active', roles: '[]', primary_identity_id: primary ? 'i1' : null, created_at: now, updated_at: now, last_sign_in_at: now }).execute();
  await db.insertInto('identities').values({ id: 'i1', user_id: 'u1', provider_id: 'dev', subject, email: 'ann@example.com', email_verified: 1, claims: '{}', linked_at: now, last_used_at: now }).execute();
}
