/**
 * Public paths (no sign-in needed) match on the normalised path only, never on the query or fragment:
 * the path is percent-decoded once for unreserved characters, `\` is treated as `/`, `//` collapsed and
 * dot segments resolved, exactly as an upstream would read it. Anything that does not normalise
 * cleanly (an encoded slash or backslash, a NUL, bad escapes) is never public: fail closed.
 */
export function normalisePath(rawPath: string): string | undefined {
  const path = rawPath.split('?')[0]!.split('#')[0]!;
  if (!path.startsWith('/')) return undefined;
  let decoded: string;
  try {
    // %2F, %5C and %00 would let "/public%2F..%2Fadmin" mean different things to us and the upstream.
    if (/%(2f|5c|00)/i.test(path)) return undefined;
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const segments: string[] = [];
  for (const segment of decoded.replace(/\\/g, '/').split('/')) {
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
