/**
 * How real upstreams turn a request target into the path they serve, written independently of
 * Gatehouse's own normaliser (src/authorize/publicPaths.ts) so the fuzz oracle does not share its bugs.
 *
 * There is no single answer: a Node app routes on the WHATWG-parsed path, a static file server decodes
 * then resolves dot segments, a servlet container drops `;` path parameters, a CGI or PHP app may decode
 * twice, a legacy decoder reads overlong UTF-8 (`%c0%ae` as "."), a framework that applies Unicode
 * NFKC reads "．．" (U+FF0E) as "..", node:http keeps a `#` fragment in the target while browsers never
 * send one. A path counts as public only when EVERY reading is public: Gatehouse promises to treat
 * anything an upstream might read differently as not public (fail closed).
 */

/** Percent-decodes once as bytes, then UTF-8 (invalid sequences fail: undefined), like decodeURIComponent. */
function decodeOnce(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Percent-decodes with a lenient decoder: bytes kept as Latin-1 when they are not valid UTF-8 (old CGI stacks). */
function decodeLatin1(value: string): string {
  return value.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Overlong UTF-8 encodings of ".", "/" and "\" as a non-conforming decoder reads them (CVE-2000-0884 style). */
const OVERLONG: ReadonlyArray<[RegExp, string]> = [
  [/%c0%ae|%e0%80%ae|%f0%80%80%ae/gi, '.'],
  [/%c0%af|%e0%80%af|%f0%80%80%af/gi, '/'],
  [/%c1%9c|%e0%81%9c/gi, '\\'],
];
function decodeOverlong(value: string): string {
  let result = value;
  for (const [pattern, replacement] of OVERLONG) result = result.replace(pattern, replacement);
  return decodeLatin1(result);
}

/** RFC 3986 §5.2.4 remove_dot_segments, with `//` collapsed (as nginx merge_slashes and most routers do). */
function resolveDots(path: string, backslashIsSlash: boolean): string {
  const source = backslashIsSlash ? path.replace(/\\/g, '/') : path;
  const segments: string[] = [];
  for (const segment of source.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const last = source.split('/').pop();
  const trailing = segments.length > 0 && (source.endsWith('/') || last === '.' || last === '..') ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

/** Drops `;params` from every segment, as servlet containers do ("/a;x/..;/b" → "/a/../b"). */
function dropPathParameters(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      const semicolon = segment.indexOf(';');
      return semicolon === -1 ? segment : segment.slice(0, semicolon);
    })
    .join('/');
}

/**
 * Every path an upstream might serve for this request target (the raw request-target as it arrived on
 * the wire). Targets that are not origin-form yield the path of the absolute URL too, since an upstream
 * serving several hosts reads it (RFC 9112 §3.2.2).
 */
export function resolvedPaths(target: string): Set<string> {
  const out = new Set<string>();
  let raw = target;
  if (!raw.startsWith('/')) {
    if (!URL.canParse(raw)) return out;
    const url = new URL(raw);
    raw = `${url.pathname}${url.search}`;
  }
  // 1. The WHATWG URL parser (Node apps, Deno, Go's net/url is close): handles %2e dot segments and "\".
  if (URL.canParse(raw, 'http://upstream.test')) {
    const pathname = new URL(raw, 'http://upstream.test').pathname;
    out.add(pathname);
    for (const decode of [decodeOnce, decodeLatin1]) {
      const decoded = decode(pathname);
      if (decoded !== undefined) {
        out.add(decoded);
        out.add(resolveDots(decoded, false));
        out.add(resolveDots(decoded.normalize('NFKC'), true));
      }
    }
  }
  // 2. The raw target with the query cut, and with or without the fragment cut (node:http keeps it).
  const query = raw.indexOf('?');
  const pathPart = query === -1 ? raw : raw.slice(0, query);
  const hash = pathPart.indexOf('#');
  const bases = hash === -1 ? [pathPart] : [pathPart, pathPart.slice(0, hash)];
  for (const base of bases) {
    for (const params of [false, true]) {
      const withoutParams = params ? dropPathParameters(base) : base;
      const decodings: Array<string | undefined> = [
        withoutParams,
        decodeOnce(withoutParams),
        decodeLatin1(withoutParams),
        decodeOverlong(withoutParams),
      ];
      const once = decodeOnce(withoutParams);
      if (once !== undefined) decodings.push(decodeOnce(once), decodeLatin1(once));
      for (const decoded of decodings) {
        if (decoded === undefined) continue;
        for (const form of [decoded, decoded.normalize('NFKC')]) {
          out.add(resolveDots(form, false));
          out.add(resolveDots(form, true));
        }
      }
    }
  }
  return out;
}

/** The documented public-path rule (docs: "/exact" only itself; "/prefix/*" the prefix and below). */
export function matchesPublic(path: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => {
    if (pattern.endsWith('/*')) {
      const prefix = pattern.slice(0, -2);
      return path === prefix || path.startsWith(`${prefix}/`);
    }
    return path === pattern;
  });
}

/** Public for every upstream reading (and there is at least one reading). */
export function publicForEveryReading(target: string, patterns: readonly string[]): { public: boolean; privateReading?: string } {
  if (patterns.length === 0) return { public: false, privateReading: '(no public paths)' };
  const readings = resolvedPaths(target);
  if (readings.size === 0) return { public: false, privateReading: '(unparseable)' };
  for (const reading of readings) if (!matchesPublic(reading, patterns)) return { public: false, privateReading: reading };
  return { public: true };
}
