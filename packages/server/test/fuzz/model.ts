/**
 * The world the fuzz run attacks, described once: two apps of different policies, the one person who
 * signs in, and the symbolic names generated requests use for things only known at run time (ports,
 * cookies, the CSRF token). The oracle judges with this model, never with Gatehouse's own code.
 */

export type AppId = 'wiki' | 'vault';

export interface FuzzApp {
  id: AppId;
  /** Host name (the port is added at run time). */
  hostname: string;
  publicPaths: string[];
  /** Groups that may open the app (the policy: `allow: [{ groups }]`). */
  allowGroups: string[];
  corsPreflight: boolean;
  /** Whether the operator turned compression on for it (`compress`; off by default). */
  compress: boolean;
}

export const APPS: Record<AppId, FuzzApp> = {
  // Public paths, a policy bob meets, CORS preflights let through, compression on.
  wiki: { id: 'wiki', hostname: 'wiki.localhost', publicPaths: ['/public/*', '/healthz'], allowGroups: ['staff'], corsPreflight: true, compress: true },
  // Admins only, nothing public, compression left off.
  vault: { id: 'vault', hostname: 'vault.localhost', publicPaths: [], allowGroups: ['admins'], corsPreflight: false, compress: false },
};

/**
 * How the recording upstream answers a request, chosen by the request's `X-Fuzz-Answer` header: a
 * short text (the default), pages long enough to compress (an HTML page reflecting the request's
 * target, JSON, a page of unknown length), or a page the app compressed itself (`Content-Encoding: gzip`).
 */
export const ANSWER_SHAPES = ['small', 'page', 'json', 'stream', 'encoded'] as const;
export type AnswerShape = (typeof ANSWER_SHAPES)[number];

/** The only `Sec-Fetch-Site` values whose answers Gatehouse may compress: the app's own pages, the person's own navigation. */
export const COMPRESSIBLE_FETCH_SITES: readonly string[] = ['same-origin', 'none'];

/** The person who signs in through the development IdP (its default user set). */
export const USER = { login: 'bob@example.com', password: 'bob', groups: ['staff'] } as const;

/** The oracle's own policy evaluation: may the signed-in user open the app? */
export function userMayOpen(app: AppId): boolean {
  return APPS[app].allowGroups.some((group) => (USER.groups as readonly string[]).includes(group));
}

/** Provider id of the development IdP in the fuzzed Gatehouse. */
export const PROVIDER = 'dev';

/**
 * Where a generated request stands in for run-time values: replaced just before it is written.
 * The brackets (U+27E6/U+27E7) are never produced by a generator.
 */
export const T = {
  port: '⟦port⟧',
  wikiCookie: '⟦wiki-cookie⟧',
  vaultCookie: '⟦vault-cookie⟧',
  portalCookie: '⟦portal-cookie⟧',
  csrf: '⟦csrf⟧',
  fuzzId: '⟦id⟧',
  idpIssuer: '⟦issuer⟧',
  bobSub: '⟦bob-sub⟧',
  /** Content-Length, computed once the body's placeholders are filled in. */
  length: '⟦length⟧',
  logoutToken: '⟦logout-token⟧',
} as const;

/** Markers a spoofed header value carries, so its arrival upstream can be recognised. */
export const SPOOF = { word: 'spoofed', ip: '203.0.113.66' } as const;

/** Which peer the request comes from: loopback 127.0.0.1 is a trusted proxy, 127.0.0.2 is not. */
export type Peer = 'trusted' | 'untrusted';
export const PEER_ADDRESS: Record<Peer, string> = { trusted: '127.0.0.1', untrusted: '127.0.0.2' };

export type Surface = 'app' | 'forward-auth' | 'portal' | 'portal-state' | 'backchannel' | 'callback' | 'raw';

/** Which of bob's credentials a request carries (for the oracle). */
export type Credential = 'none' | 'wiki' | 'vault' | 'portal' | 'garbage' | 'tampered' | 'wiki+vault';

export interface FuzzRequest {
  surface: Surface;
  peer: Peer;
  /**
   * The request exactly as written on the socket, with placeholders (T). For every surface but `raw` it
   * is built from method, target and headers; `raw` requests are arbitrary bytes.
   */
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: string;
  /** For `raw`: the whole request text (method/target/headers above are informative only). */
  raw?: string;
  credential: Credential;
  /** forward-auth: the app the proxy block that asks serves; app: the app the request is meant for. */
  servedApp?: AppId;
  /** portal-state: the request carries a valid CSRF token AND the exact Origin (never generated together). */
  csrfComplete?: boolean;
  /** backchannel: the logout token ("jwt:<b64 header>.<payload JSON>.<signature>" is completed when rendered). */
  logoutToken?: { value: string; encoding: 'form' | 'json' };
}

/** Names (lower-case, `_` read as `-`) of the headers an upstream may treat as describing the original request. */
export const REWRITE_HEADERS = new Set([
  'x-original-url',
  'x-rewrite-url',
  'x-original-uri',
  'x-forwarded-uri',
  'x-forwarded-prefix',
  'x-forwarded-port',
  'x-forwarded-server',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-for',
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
  'forwarded',
  'x-host',
  'x-forwarded-scheme',
]);

export const IDENTITY_HEADER_NAMES = ['x-gatehouse-user', 'x-gatehouse-email', 'x-gatehouse-name', 'x-gatehouse-groups', 'x-gatehouse-assertion'];

export function canonicalHeaderName(name: string): string {
  return name.toLowerCase().replace(/_/g, '-');
}
