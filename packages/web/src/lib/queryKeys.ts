/**
 * Query keys that cross feature lines. Everything about the signed-in person's own account lives
 * under `['me']`, so an action in one section can refresh another (revoking a session or unlinking an
 * identity writes a line to "Recent activity") without the features importing each other.
 */
export const meQueryKeys = {
  all: ['me'] as const,
  sessions: ['me', 'sessions'] as const,
  identities: ['me', 'identities'] as const,
  activity: ['me', 'activity'] as const,
};
