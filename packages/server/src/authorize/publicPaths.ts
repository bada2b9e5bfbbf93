// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_OR_ESCAPE = /[\u0000-\u001f\u007f]|%[0-9a-f]{2}/i;

/**
 * Public paths (no sign-in needed) match on the normalised path only, never on the query or fragment:
 * the path is percent-decoded once, `\` is treated as `/`, `//` collapsed and dot segments resolved,
 * as an upstream would read it. Anything an upstream might read differently is never public (fail
 * closed):
 * - an encoded slash or backslash, or bad escapes;
 * - a control character (NUL, CR, tab, …) once decoded;
 * - an escape still there after decoding ("%252e" → "%2e"), for an upstream that decodes twice;
 * - a dot segment with path parameters ("..;" or ".;x"), which servlet containers such as Tomcat
 *   resolve as ".." and "." ("/public/..;/admin" is "/admin" to them).
 */
export function normalisePath(rawPath: string): string | undefined {
  const path = rawPath.split('?')[0]!.split('#')[0]!;
  if (!path.startsWith('/')) return undefined;
  let decoded: string;
  try {
    // %2F and %5C would let "/public%2F..%2Fadmin" mean different things to us and the upstream.
    if (/%(2f|5c)/i.test(path)) return undefined;
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (CONTROL_OR_ESCAPE.test(decoded)) return undefined;
  const segments: string[] = [];
  for (const segment of decoded.replace(/\\/g, '/').split('/')) {
    if (segment.startsWith('.;') || segment.startsWith('..;')) return undefined;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const trailing = decoded.endsWith('/') && segments.length > 0 ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

/** "/exact" matches only itself; "/prefix/*" matches "/prefix" and everything below it. */
export function isPublicPath(rawPath: string, patterns: readonly string[]): boolean {
  if (patterns.length === 0) return false;
  const path = normalisePath(rawPath);
  if (path === undefined) return false;
  return patterns.some((pattern) => {
    if (pattern.endsWith('/*')) {
      const prefix = pattern.slice(0, -2);
      return path === prefix || path.startsWith(`${prefix}/`);
    }
    return path === pattern;
  });
}
