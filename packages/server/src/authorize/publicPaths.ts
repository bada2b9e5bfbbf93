// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_OR_ESCAPE = /[\u0000-\u001f\u007f]|%[0-9a-f]{2}/i;
const NON_ASCII = /[\u0080-\uffff]/;
/**
 * Characters that Unicode normalisation leaves alone but that some servers still read as "." "/" or
 * "\": the ideographic full stop, division and fraction slashes, and the yen and won signs that
 * Windows' best-fit conversion to East Asian code pages turns into a backslash. (The fullwidth and
 * other compatibility forms, "．" "／" "＼" "․", are caught by the NFKC comparison.)
 */
const LOOK_ALIKE = /[\u3002\u2215\u2044\u29f8\u2216\u00a5\u20a9]/;

/**
 * The path as an upstream resolves it, for public-path matching, or undefined when upstreams may
 * resolve it differently (fail closed: such a path is never public). The path is percent-decoded once,
 * `//` collapsed and dot segments resolved. With `withoutParameters`, each
 * segment's path parameters (";…") are dropped first, as servlet containers (Tomcat, Jetty) do:
 * "/admin;x=1" is "/admin" to them. Never public:
 * - an encoded slash, a backslash (raw or encoded: a separator to some, a character to others), or
 *   bad escapes;
 * - a control character (NUL, CR, tab, …) once decoded;
 * - an escape still there after decoding ("%252e" → "%2e"), for an upstream that decodes twice;
 * - a dot segment with path parameters ("..;" or ".;x"), which servlet containers resolve as ".."
 *   and "." ("/public/..;/admin" is "/admin" to them);
 * - a "#" (no request target has one, RFC 9112 §3.2; servers disagree on what it means);
 * - an empty segment ("//") together with a ".." segment, which upstreams that merge slashes and
 *   WHATWG URL parsers (which do not) resolve differently;
 * - a leading "//", which a WHATWG URL parser reads as a host ("//public/x" is "/x" on host
 *   "public" to an app that parses `new URL(request.url, base)`);
 * - a character that Unicode normalisation (NFKC) would change, or a look-alike of ".", "/" or "\"
 *   ("/public/．．/admin" is "/admin" to an upstream that normalises).
 * The query is not part of the path: everything from the first "?" is left out.
 */
export function normalisePath(rawPath: string, { withoutParameters = false } = {}): string | undefined {
  const query = rawPath.indexOf('?');
  const path = query === -1 ? rawPath : rawPath.slice(0, query);
  if (path.charCodeAt(0) !== 0x2f || path.includes('#')) return undefined;
  // "//host/x" is a host and a path to a WHATWG URL parser (an app's `new URL(request.url, base)`):
  // "//public/x" would be "/x" there.
  if (path.charCodeAt(1) === 0x2f) return undefined;
  let decoded: string;
  try {
    // %2F and %5C would let "/public%2F..%2Fadmin" mean different things to us and the upstream.
    if (/%(2f|5c)/i.test(path)) return undefined;
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  // A backslash is a separator to some upstreams (IIS, URL parsers) and a character to others.
  if (CONTROL_OR_ESCAPE.test(decoded) || decoded.includes('\\')) return undefined;
  if (NON_ASCII.test(decoded) && (decoded.normalize('NFKC') !== decoded || LOOK_ALIKE.test(decoded))) return undefined;
  return resolveSegments(decoded, withoutParameters);
}

/** Dot segments resolved and "//" merged, or undefined where upstreams would resolve it differently. */
function resolveSegments(path: string, withoutParameters: boolean): string | undefined {
  const segments: string[] = [];
  const parts = path.split('/');
  let empty = false;
  let up = false;
  for (const [index, raw] of parts.entries()) {
    if (raw.startsWith('.;') || raw.startsWith('..;')) return undefined;
    const parameters = withoutParameters ? raw.indexOf(';') : -1;
    const segment = parameters === -1 ? raw : raw.slice(0, parameters);
    if (segment === '') empty ||= index > 0 && index < parts.length - 1;
    else if (segment === '..') {
      segments.pop();
      up = true;
    } else if (segment !== '.') segments.push(segment);
  }
  // "/x//../public": merging slashes first gives "/public", a WHATWG URL parser (which keeps empty
  // segments, and lets ".." remove one) gives "/x/public". Upstreams differ: never public.
  if (empty && up) return undefined;
  // RFC 3986 §5.2.4: a final "." or ".." leaves a trailing slash ("/a/." is "/a/"), as "/" does.
  const last = parts[parts.length - 1];
  const trailing = segments.length > 0 && (last === '' || last === '.' || last === '..') ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

/**
 * "/exact" matches only itself; "/prefix/*" matches "/prefix" and everything below it. A path is public
 * only when it is public under every reading upstreams are known to make:
 * - with path parameters (";") as part of their segment, and without them (servlet containers);
 * - percent-decoded, and as it is: Express and other routers match routes against the path still
 *   encoded, so "/%70ublic/x" misses their "/public" mount and falls to a route behind it.
 */
export function isPublicPath(rawPath: string, patterns: readonly string[]): boolean {
  if (patterns.length === 0) return false;
  const path = normalisePath(rawPath);
  if (path === undefined || !matches(path, patterns)) return false;
  if (path.includes(';')) {
    const withoutParameters = normalisePath(rawPath, { withoutParameters: true });
    if (withoutParameters === undefined || !matches(withoutParameters, patterns)) return false;
  }
  const query = rawPath.indexOf('?');
  const encoded = query === -1 ? rawPath : rawPath.slice(0, query);
  if (!encoded.includes('%')) return true;
  const undecoded = resolveSegments(encoded, false);
  return undecoded !== undefined && matches(undecoded, patterns);
}

function matches(path: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => {
    if (pattern.endsWith('/*')) {
      const prefix = pattern.slice(0, -2);
      return path === prefix || path.startsWith(`${prefix}/`);
    }
    return path === pattern;
  });
}
