/** A user's roles as stored (a JSON array of names); anything unreadable grants no role. */
export function parseRoles(roles: string): string[] {
  try {
    const parsed = JSON.parse(roles) as unknown;
    return Array.isArray(parsed) ? parsed.filter((role): role is string => typeof role === 'string') : [];
  } catch {
    return [];
  }
}
