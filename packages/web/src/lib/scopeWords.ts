/**
 * What an app signed in with Gatehouse may know of a person, from the scopes it was granted, in the
 * person's words: "your name, email address and groups". Shared by the account center (the person's own
 * apps) and the console (an app's or a user's), so both say the same thing.
 */

/** The scopes that name something about the person, in the order they are said. */
const SEEN: ReadonlyArray<readonly [scope: string, words: string]> = [
  ['profile', 'name'],
  ['email', 'email address'],
  ['groups', 'groups'],
  // Standard OpenID Connect scopes Gatehouse does not grant today; a stored grant may still name them.
  ['address', 'postal address'],
  ['phone', 'phone number'],
];

/** What the sign-in itself says, and what staying signed in adds: not something the app sees. */
const NOT_SEEN = new Set(['openid', 'offline_access']);

/** "a", "a and b", "a, b and c". */
function listed(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * The scopes in words. Only `openid`: "only who you are" (the app learns the account's identifier and
 * nothing about it). With `offline_access`, ", also while you are away" (it may refresh its tokens when
 * the person is not there). A scope this version does not know is shown as it is, in quotes: never
 * hidden, since it may let the app see something.
 */
export function scopeWords(scopes: readonly string[]): string {
  const granted = new Set(scopes);
  const seen = SEEN.filter(([scope]) => granted.has(scope)).map(([, words]) => words);
  const known = new Set(SEEN.map(([scope]) => scope));
  const unknown = [...granted].filter((scope) => !known.has(scope) && !NOT_SEEN.has(scope)).map((scope) => `“${scope}”`);
  const items = [...seen, ...unknown];
  const what = items.length === 0 ? 'only who you are' : `your ${listed(items)}`;
  return granted.has('offline_access') ? `${what}, also while you are away` : what;
}

/** The same about someone else, for the console: "their name, email address and groups". */
export function scopeWordsAbout(scopes: readonly string[]): string {
  return scopeWords(scopes).replace(/^your /, 'their ').replace(/^only who you are/, 'only who they are').replace(/while you are away$/, 'while they are away');
}
