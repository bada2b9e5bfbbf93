import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forwardedRequest, rewriteHeaderOf } from '../../src/proxy/forwardAuth.js';
import { isPublicPath, normalisePath } from '../../src/authorize/publicPaths.js';

/**
 * Public-path bypasses: Gatehouse lets a request through without a session when its path is one of the
 * app's public paths, and the app then reads the same request target its own way. Whatever an app may
 * resolve to a private path must never be judged public. Each case names the reading it guards against;
 * the properties below run the judge against several real-world ways upstreams resolve paths.
 */

const PATTERNS = ['/public/*', '/healthz', '/static/*'];

describe('paths that upstreams resolve differently are never public', () => {
  it.each<[string, string]>([
    // Threat: comma as a list separator (the forward-auth bypass of issue 16): one path, judged whole.
    ['/static,/../secret.txt', 'resolves to /secret.txt'],
    ['/healthz,/../admin', 'resolves to /admin'],
    // Threat: dot segments in every encoding (CVE-2021-41773-style traversal).
    ['/public/../admin', 'plain dot segments'],
    ['/public/%2e%2e/admin', 'encoded dots'],
    ['/public/%2E%2e/admin', 'mixed-case escapes'],
    ['/public/.%2e/admin', 'half-encoded'],
    ['/public/..%2fadmin', 'encoded slash'],
    ['/public%2f..%2fadmin', 'encoded slashes only'],
    ['/public/..%5cadmin', 'encoded backslash'],
    ['/public/..\\admin', 'raw backslash (IIS, Windows servers)'],
    ['/public/%252e%252e/admin', 'double encoding, for an upstream that decodes twice'],
    // Threat: path parameters (Tomcat, Jetty drop ";…" from each segment: CVE-2020-1938-era bypasses).
    ['/public/..;/admin', 'a dot segment with parameters'],
    ['/public/.;x/../../admin', 'a dot segment with parameters'],
    ['/public;x/../admin', 'parameters before a dot segment'],
    // Threat: fragments, which no request target has (RFC 9112 §3.2), read as a path character by some.
    ['/public/#/../admin', 'a raw "#"'],
    // Threat: Unicode look-alikes folded by an upstream that normalises (NFKC) or converts best-fit.
    ['/public/\uff0e\uff0e/admin', 'fullwidth full stops'],
    ['/public/%EF%BC%8E%EF%BC%8E/admin', 'fullwidth full stops, encoded'],
    ['/public/%E2%80%A4%E2%80%A4/admin', 'one dot leaders'],
    ['/public/%E2%80%A5/admin', 'a two dot leader'],
    ['/public/%E3%80%82%E3%80%82/admin', 'ideographic full stops'],
    ['/public/..%EF%BC%8Fadmin', 'a fullwidth solidus'],
    ['/public/..%E2%88%95admin', 'a division slash'],
    ['/public/..%C2%A5admin', 'a yen sign (best-fit to "\\" in Japanese code pages)'],
    // Threat: control characters and NUL, cut or dropped by some upstreams.
    ['/public/%00/../../admin', 'NUL'],
    ['/public/x%0d%0a/../../admin', 'CR LF'],
    ['/public/x%09/../../admin', 'tab'],
    // Threat: a router that matches the path still encoded (Express): "/%70ublic/x" misses its
    // "/public" mount and falls to a private route behind it. Found by the fuzz run.
    ['/%70ublic/x', 'an encoded letter in the public prefix'],
    ['/pub%6cic/x', 'an encoded letter in the public prefix'],
    ['/:public/../%68ealthz', 'an encoded letter after a dot segment'],
    // Threat: case, for a judge that folds and an upstream that does not.
    ['/PUBLIC/x', 'case differs from the public path'],
    // Threat: a leading "//", a host to a WHATWG URL parser (an app's `new URL(request.url, base)`).
    ['//public/x', 'host "public", path "/x"'],
    ['//healthz', 'host "healthz", path "/"'],
    ['/\\public/x', 'a backslash, read as "/" by URL parsers'],
    // Threat: empty segments with "..": merged first by some upstreams, kept by WHATWG URL parsers.
    ['/x//../public/a', '"/public/a" merged, "/x/public/a" to a URL parser'],
    ['/public/a/..//b', '"/public/b" merged, "/public/a//b"... to a URL parser'],
    // Threat: the query, read as the path by a naive judge.
    ['/admin?/public/x', 'the public path only in the query'],
  ])('%s (%s)', (raw) => {
    expect(isPublicPath(raw, PATTERNS)).toBe(false);
  });

  it.each(['/public/a%20b', '/public/100%25', '/public/x', '/public/a/b.css', '/public//x', '/public/a//b/', '/public/./x', '/public/x?q=/admin', '/healthz', '/static/app.css', '/public/x;v=1'])('%s stays public', (raw) => {
    expect(isPublicPath(raw, PATTERNS)).toBe(true);
  });

  it('judges a ";" path under both readings', () => {
    expect(normalisePath('/a;x/b')).toBe('/a;x/b');
    expect(normalisePath('/a;x/b', { withoutParameters: true })).toBe('/a/b');
    // Public only as it is, not without its parameters ("/public;x" is "/public" to Tomcat, whose
    // pattern "/public/*" includes it, but "/static;x/../public" is not public either way).
    expect(isPublicPath('/healthz;x', PATTERNS)).toBe(false);
    expect(isPublicPath('/public;/x', PATTERNS)).toBe(false);
  });
});

/**
 * How real upstreams turn a request target into the path they serve. Each returns undefined where that
 * upstream would refuse the request. The query is never part of the path.
 */
const beforeQuery = (raw: string) => raw.split('?')[0]!;
const decode = (value: string) => {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
};
const resolveDots = (value: string) => path.posix.normalize(value.replace(/\/+/g, '/'));
const UPSTREAMS: Record<string, (raw: string) => string | undefined> = {
  // Express's serve-static / send, most frameworks' routers: decode once, then resolve.
  'decode, then resolve': (raw) => {
    const decoded = decode(beforeQuery(raw));
    return decoded === undefined ? undefined : resolveDots(decoded);
  },
  // Express and other routers: routes match the path still encoded (dot segments resolved by the client).
  'route on the encoded path': (raw) => resolveDots(beforeQuery(raw)),
  // Windows servers (IIS): "\" is a separator too.
  'decode, backslash as slash, resolve': (raw) => {
    const decoded = decode(beforeQuery(raw));
    return decoded === undefined ? undefined : resolveDots(decoded.replace(/\\/g, '/'));
  },
  // A WHATWG URL parser (browsers, Node's URL): resolves "%2e" dot segments before decoding the rest.
  'URL parser, then decode': (raw) => {
    if (!URL.canParse(raw, 'http://upstream.invalid')) return undefined;
    const decoded = decode(new URL(beforeQuery(raw), 'http://upstream.invalid').pathname);
    return decoded === undefined ? undefined : resolveDots(decoded);
  },
  // Servlet containers (Tomcat, Jetty): decode, drop each segment's path parameters, resolve.
  'servlet (path parameters dropped)': (raw) => {
    const decoded = decode(beforeQuery(raw));
    return decoded === undefined ? undefined : resolveDots(decoded.split('/').map((segment) => segment.split(';')[0]).join('/'));
  },
  // An upstream behind another decoding layer: decodes twice.
  'decode twice, then resolve': (raw) => {
    const once = decode(beforeQuery(raw));
    const twice = once === undefined ? undefined : decode(once);
    return twice === undefined ? undefined : resolveDots(twice);
  },
  // An upstream that normalises Unicode (NFKC) after decoding.
  'decode, NFKC, resolve': (raw) => {
    const decoded = decode(beforeQuery(raw));
    return decoded === undefined ? undefined : resolveDots(decoded.normalize('NFKC'));
  },
  // One that reads a raw "#" as the end of the path.
  'fragment cut, then decode': (raw) => {
    const decoded = decode(beforeQuery(raw).split('#')[0]!);
    return decoded === undefined ? undefined : resolveDots(decoded);
  },
};

/** The test's own reading of the patterns (independent of the code under test). */
const publicTo = (resolved: string) =>
  PATTERNS.some((pattern) => (pattern.endsWith('/*') ? resolved === pattern.slice(0, -2) || resolved.startsWith(pattern.slice(0, -1)) : resolved === pattern));

/** Request targets built from what path-confusion attacks are made of. */
const PIECES = ['/', '/', '/', '.', '..', '%2e', '%2E', '%2e%2e', '%2f', '%5c', '\\', ';', ';x=1', 'public', 'static', 'healthz', 'admin', 'secret.txt', '%252e', '%25', '?', '#', '%00', '%09', ',', '%E2%80%A4', '%EF%BC%8E', '\uff0e', '\u3002', '%C2%A5', 'a', 'A', 'PUBLIC', '//', '%20'];
const target = fc
  .array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 12 })
  .map((pieces) => `/${pieces.join('')}`);

describe('properties', () => {
  // Threat: any path-confusion bypass. If the judged path is public, every upstream reading is public.
  it('if the judged path is public, the path every modelled upstream resolves is public', () => {
    fc.assert(
      fc.property(target, (raw) => {
        if (!isPublicPath(raw, PATTERNS)) return;
        for (const [name, resolve] of Object.entries(UPSTREAMS)) {
          const resolved = resolve(raw);
          if (resolved !== undefined) expect(publicTo(resolved), `${name}: ${raw} → ${resolved}`).toBe(true);
        }
      }),
      { numRuns: 20_000 },
    );
  });

  it('the normalised path is a fixed point, and never escapes the root', () => {
    fc.assert(
      fc.property(target, (raw) => {
        const normalised = normalisePath(raw);
        if (normalised === undefined) return;
        expect(normalised.startsWith('/')).toBe(true);
        expect(normalised.split('/')).not.toContain('..');
        if (!normalised.includes('%')) expect(normalisePath(normalised)).toBe(normalised);
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('the forwarded-URI reader', () => {
  const described = (uri: string | string[], extra: Record<string, string> = {}) =>
    forwardedRequest({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example.com', 'x-forwarded-method': 'GET', 'x-forwarded-uri': uri, ...extra }, 'x-forwarded-uri');

  // Threat: a reader that splits, trims or picks one value judges something the app never sees.
  it('accepts a URI only as the very string the proxy sent, or not at all', () => {
    fc.assert(
      fc.property(fc.oneof(target, fc.string(), fc.string({ unit: 'binary' })), (uri) => {
        const read = described(uri);
        if (read === undefined) return;
        expect(read.uri).toBe(uri);
        expect(uri).toMatch(/^\/[\x21-\x7e]*$/);
        expect(uri).not.toContain('#');
      }),
      { numRuns: 5_000 },
    );
  }, 30_000);

  // Threat: a second URI header (the client's copy beside the proxy's) read as a list.
  it('refuses any two URIs, however they arrive', () => {
    fc.assert(
      fc.property(target, target, (first, second) => {
        expect(described(`${first}, ${second}`)).toBeUndefined();
        expect(described([first, second])).toBeUndefined();
      }),
      { numRuns: 2_000 },
    );
  });

  // Threat: a rewrite header the app may route by, in any spelling.
  it('finds a URL-rewrite header in any case and with "_" for "-", except the configured one', () => {
    const spellings = fc
      .tuple(fc.constantFrom('x-original-url', 'x-rewrite-url', 'x-original-uri', 'x-forwarded-uri'), fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }))
      .map(([name, flips]) => [...name].map((c, i) => (c === '-' && flips[i] ? '_' : c)).join(''));
    fc.assert(
      fc.property(spellings, (name) => {
        const configured = name === 'x-forwarded-uri';
        expect(rewriteHeaderOf({ [name]: '/x', accept: '*/*' }, 'x-forwarded-uri')).toBe(configured ? undefined : name);
        expect(rewriteHeaderOf({ [name]: '/x' }, 'x-original-uri')).toBe(name === 'x-original-uri' ? undefined : name);
      }),
    );
  });
});
