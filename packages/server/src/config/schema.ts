import { appSchema, durationSchema, emailSchema, groupPrefix, idSchema, originUrl, providerSchema } from '@gatehouse/contract';
import { z } from 'zod';
import { providerWarnings, testOnlySettings } from './providers/trust.js';
import { appSetIssues } from './appSetIssues.js';
import { byteSizeSchema } from './byteSize.js';

const duration = durationSchema;

const adminGroupEntry = z
  .object({
    provider: idSchema,
    group: z.string().min(1).max(256),
  })
  .strict();

/**
 * One entry of `admins.groups`: a group, and the provider whose assertion of it is believed. A bare
 * group name is refused, since it would make anyone an admin whose IdP (any IdP) asserts that name.
 */
const adminGroup = z.unknown().transform((value, ctx) => {
  if (typeof value === 'string') {
    ctx.addIssue({ code: 'custom', message: `must name the provider it trusts: { provider: <provider id>, group: ${JSON.stringify(value)} }` });
    return z.NEVER;
  }
  const parsed = adminGroupEntry.safeParse(value);
  if (!parsed.success) {
    // As they are (an unknown key stays one, for check-config to name the key).
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  }
  return parsed.data;
});

const encryptionKey = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 letters, digits, _ or -'),
    key: z.string().min(1),
  })
  .strict();

const developmentIdp = z
  .object({
    port: z.number().int().min(1).max(65535),
    providerId: idSchema,
    name: z.string().min(1).max(80),
    /** Which built-in demo accounts it has: "default" (alice, bob) or "partner" (alice, carol). */
    users: z.enum(['default', 'partner']).default('default'),
    /** As for any provider: off unless said (the built-in defaults trust the Development IdP only). */
    trustGroups: z.boolean().default(false),
    groupPrefix: groupPrefix.optional(),
  })
  .strict();

const developmentSchema = z
  .object({
    /** Built-in development IdPs, each started as a child process and registered as a provider. */
    idps: z.array(developmentIdp).default([]),
    /** The demo upstream app ("whoami"), started as a child process (development mode only). */
    demoApp: z
      .union([z.literal(false), z.object({ port: z.number().int().min(1).max(65535).default(4182) }).strict()])
      .default(false),
  })
  .strict()
  .prefault({});

/**
 * A Redis server's URL: redis:// or rediss:// (TLS), with a host. The value is never repeated in a
 * message: it may carry a password.
 */
const redisUrl = z.string().superRefine((value, ctx) => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) {
    ctx.addIssue({ code: 'custom', message: 'must be a redis:// or rediss:// URL with a host (redis://[:password@]host[:port][/db])' });
  }
});

/**
 * Where Gatehouse keeps its data: SQLite (the embedded default, a file under dataDir unless `path` says
 * otherwise) or PostgreSQL (`url`, or GATEHOUSE_DATABASE_URL). Messages never repeat the URL: it may
 * hold a password.
 */
const databaseSchema = z
  .object({
    /** Optional and derived from `url`; accepted so that older files saying `driver: sqlite` still load. */
    driver: z.enum(['sqlite', 'postgres']).optional(),
    /** A PostgreSQL connection URL: postgres://user[:password]@host[:port]/database[?sslmode=…]. */
    url: z
      .string()
      .min(1)
      .refine(isPostgresUrl, { message: 'must be a postgres:// or postgresql:// URL (host and database name; percent-encode special characters)' })
      .optional(),
    /** PostgreSQL: the password, when it is kept out of the URL (e.g. ${GATEHOUSE_DATABASE_PASSWORD}). */
    password: z.string().min(1).optional(),
    /** SQLite: the database file, relative to dataDir (":memory:" for a throwaway in-memory one). */
    path: z.string().min(1).optional(),
    pool: z
      .object({
        /** PostgreSQL: connections this node keeps at most. */
        max: z.number().int().min(1).max(1000).default(10),
      })
      .strict()
      .prefault({}),
    /** PostgreSQL: a statement running longer than this is cancelled (the request fails instead of hanging). */
    statementTimeout: duration.default(30_000),
  })
  .strict()
  .prefault({})
  .superRefine((database, ctx) => {
    if (database.url !== undefined && database.path !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'is for SQLite: give either url (PostgreSQL) or path (SQLite), not both' });
    }
    if (database.driver === 'postgres' && database.url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'is required with driver: postgres' });
    }
    if (database.driver === 'sqlite' && database.url !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['driver'], message: 'is sqlite but a PostgreSQL url is given (leave driver out)' });
    }
    if (database.password !== undefined && database.url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'is for PostgreSQL: it needs url' });
    }
  })
  .transform(({ driver: _driver, ...database }) => ({ ...database, driver: database.url !== undefined ? ('postgres' as const) : ('sqlite' as const) }));

function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.pathname.length > 1;
  } catch {
    return false;
  }
}

/** session.cache.maxMemory's default, in bytes (docs/operations/sizing.md says what it holds). */
export const SESSION_CACHE_DEFAULT_MAX_MEMORY = 256 * 2 ** 20;

/** `extends:` names this, the one configuration a file can add to (config/extendDefaults.ts). */
export const EXTENDS_DEVELOPMENT_DEFAULTS = 'development-defaults';

/** Where proxies on this machine connect from: believed by default in development mode only. */
export const LOOPBACK_PROXIES: readonly string[] = ['127.0.0.0/8', '::1'];

export const configSchema = z
  .object({
    /**
     * `development-defaults`: this file adds to the built-in development defaults instead of replacing
     * them (config/extendDefaults.ts merges them before this schema reads the result). Development only.
     */
    extends: z.literal(EXTENDS_DEVELOPMENT_DEFAULTS, { error: `must be ${EXTENDS_DEVELOPMENT_DEFAULTS} (the only configuration a file can extend)` }).optional(),
    mode: z.enum(['development', 'production']).default('development'),
    publicUrl: originUrl.default('http://localhost:4180'),
    listen: z
      .object({
        host: z.string().min(1).default('localhost'),
        port: z.number().int().min(0).max(65535).default(4180),
      })
      .strict()
      .prefault({}),
    dataDir: z.string().min(1).default('./data'),
    organization: z
      .object({
        name: z.string().min(1).max(80).default('Gatehouse'),
        /** Whom people ask for access: named on the access-denied page ("ask the IT desk, it@example.com"). */
        contact: z.string().trim().min(1).max(200).optional(),
      })
      .strict()
      .prefault({}),
    database: databaseSchema,
    secrets: z
      .object({
        /** Signs CSRF tokens and other short-lived values; base64 or hex of at least 32 bytes. */
        cookieKey: z.string().min(1).optional(),
        /** AES-256-GCM keys for tokens at rest; the first one encrypts, all decrypt (rotation). */
        encryptionKeys: z.array(encryptionKey).min(1).optional(),
      })
      .strict()
      .prefault({}),
    session: z
      .object({
        idleTimeout: duration.default(12 * 3_600_000),
        absoluteLifetime: duration.default(7 * 86_400_000),
        /** Last-seen is written at most this often per session (not on every request). */
        touchInterval: duration.default(60_000),
        /** While a session is used, its claims (email, name, groups) are re-checked with the IdP this often. */
        claimsRefreshInterval: duration.default(15 * 60_000),
        /**
         * How long a session's claims may go unconfirmed — re-checks postponed because its IdP does not
         * answer — before the session ends. Default: twice claimsRefreshInterval.
         */
        maxClaimsAge: duration.optional(),
        /** The in-memory cache of resolved sessions (sessions/sessionCache.ts), per process. */
        cache: z
          .object({
            /**
             * Its memory budget: the estimated bytes of its entries, the oldest stored dropped beyond it.
             * What an entry costs is measured in docs/operations/sizing.md. At least 1 MiB.
             */
            maxMemory: byteSizeSchema(2 ** 20, '1MiB').default(SESSION_CACHE_DEFAULT_MAX_MEMORY),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({})
      .transform((session) => ({ ...session, maxClaimsAge: session.maxClaimsAge ?? 2 * session.claimsRefreshInterval })),
    signIn: z
      .object({
        attemptLifetime: duration.default(10 * 60_000),
        /** How far in the future an ID token's iat may be before it is refused. */
        clockSkew: duration.default(60_000),
        /** Sign-in start + callback requests per client IP per window. */
        rateLimit: z
          .object({ max: z.number().int().min(1).default(30), window: duration.default(60_000) })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /**
     * A Redis server the nodes share, for what must count across them: today the sign-in rate limit.
     * Without it, each node counts on its own.
     */
    cache: z
      .object({
        url: redisUrl.optional(),
        /** Prefix of every key Gatehouse writes, so that one Redis can serve several deployments. */
        keyPrefix: z.string().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1-64 printable ASCII characters without spaces').default('gatehouse:'),
      })
      .strict()
      .prefault({}),
    providers: z.array(providerSchema).default([]),
    /** Who is an admin because the config says so (more can be granted in the console). */
    admins: z
      .object({
        emails: z.array(emailSchema).default([]),
        /**
         * `{ provider, group }`: admin when the session's identity comes from that provider (enabled)
         * and it asserts that group, as it asserts it (before any groupPrefix). Naming the provider is
         * the trust: its trustGroups setting does not matter here.
         */
        groups: z.array(adminGroup).default([]),
      })
      .strict()
      .prefault({}),
    /** Apps behind Gatehouse (reverse proxy or forward-auth). */
    apps: z.array(appSchema).default([]),
    /**
     * Proxies whose X-Forwarded-* headers are believed (CIDRs or addresses). Left out: in development
     * mode, the loopback addresses (a proxy tried on the same machine works at once); in production,
     * none (fail closed: every forward-auth check is refused until the operator names the proxy).
     */
    trustedProxies: z.array(z.string().min(1)).optional(),
    /**
     * Worker processes of this node: one per core (`auto`) or a number. They share the listening
     * sockets (node:cluster) and tell each other every change (events/changes.ts). 1: one process.
     */
    workers: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default(1),
    forwardAuth: z
      .object({
        /**
         * The one header a forward-auth request names the original URI in: X-Forwarded-Uri (the shipped
         * nginx, Caddy and Traefik configs) or X-Original-URI (nginx's common idiom), beside
         * X-Forwarded-Proto, -Host and -Method; or X-Original-URL, the whole original URL, with
         * X-Original-Method (ingress-nginx's `auth-url`, which sends no X-Forwarded-* to read). Never two,
         * never a fallback: another one, sent by a client, is refused.
         */
        uriHeader: z
          .string()
          .transform((name) => name.toLowerCase())
          .pipe(z.enum(['x-forwarded-uri', 'x-original-uri', 'x-original-url'], { error: 'must be X-Forwarded-Uri, X-Original-URI or X-Original-URL' }))
          .default('x-forwarded-uri'),
      })
      .strict()
      .prefault({}),
    /**
     * Prometheus metrics (operations/metrics.ts) on a listener of their own, never the public one. Off
     * unless configured. The listener has no authentication: keep it on loopback or a private network.
     */
    metrics: z
      .object({
        listen: z
          .object({
            host: z.string().min(1).default('127.0.0.1'),
            port: z.number().int().min(0).max(65535),
          })
          .strict(),
        /**
         * Host names the listener answers to besides IP addresses and `localhost` (the name Prometheus
         * scrapes it by, e.g. a Service's DNS name). Any other Host gets 421: a browser page whose name
         * was re-pointed at this address (DNS rebinding) cannot read it.
         */
        hosts: z
          .array(
            z
              .string()
              .regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i, 'must be a host name (letters, digits, dashes and dots; no port, no scheme)')
              .transform((name) => name.toLowerCase()),
          )
          .default([]),
      })
      .strict()
      .optional(),
    /**
     * One JSON line per proxied or forward-auth request (operations/accessLog.ts). On by default in
     * production, off in development.
     */
    accessLog: z
      .object({
        enabled: z.boolean().optional(),
        /** stdout, stderr, or a file it is appended to. */
        destination: z.string().min(1).default('stdout'),
        /** Write the query string too. Off: query strings carry codes and tokens. */
        query: z.boolean().default(false),
        /** Write the user's email beside their id. Off: the id is enough to look them up in the console. */
        email: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        format: z.enum(['auto', 'json', 'pretty']).default('auto'),
      })
      .strict()
      .prefault({}),
    development: developmentSchema,
  })
  .strict()
  .superRefine((config, ctx) => {
    const ids = new Set<string>();
    config.providers.forEach((provider, index) => {
      if (ids.has(provider.id)) {
        ctx.addIssue({ code: 'custom', path: ['providers', index, 'id'], message: `duplicate provider id "${provider.id}"` });
      }
      ids.add(provider.id);
    });
    if (config.mode === 'production') {
      if (!config.secrets.cookieKey) {
        ctx.addIssue({ code: 'custom', path: ['secrets', 'cookieKey'], message: 'is required in production mode' });
      }
      if (!config.secrets.encryptionKeys) {
        ctx.addIssue({ code: 'custom', path: ['secrets', 'encryptionKeys'], message: 'is required in production mode' });
      }
      if (config.development.idps.length > 0 || config.development.demoApp !== false) {
        ctx.addIssue({ code: 'custom', path: ['development'], message: 'development services cannot run in production mode' });
      }
      if (config.extends !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['extends'], message: `${config.extends} is for development mode only: a production file says everything it means` });
      }
      config.providers.forEach((provider, index) => {
        for (const { field, message } of testOnlySettings(provider)) ctx.addIssue({ code: 'custom', path: ['providers', index, field], message });
      });
    }
    for (const issue of appSetIssues(config.publicUrl, config.apps)) {
      ctx.addIssue({ code: 'custom', path: ['apps', issue.index, ...issue.field.split('.')], message: issue.message });
    }
    // The metrics listener has no authentication: it never shares the public port.
    if (config.metrics && config.metrics.listen.port !== 0 && config.metrics.listen.port === config.listen.port) {
      ctx.addIssue({ code: 'custom', path: ['metrics', 'listen', 'port'], message: 'must not be the public port (listen.port): metrics have a listener of their own' });
    }
    if (config.session.idleTimeout > config.session.absoluteLifetime) {
      ctx.addIssue({ code: 'custom', path: ['session', 'idleTimeout'], message: 'must not exceed absoluteLifetime' });
    }
    if (config.session.maxClaimsAge < config.session.claimsRefreshInterval) {
      ctx.addIssue({ code: 'custom', path: ['session', 'maxClaimsAge'], message: 'must be at least claimsRefreshInterval (claims are confirmed once an interval at most)' });
    }
  })
  .transform(({ trustedProxies, ...config }) => ({
    ...config,
    trustedProxies: trustedProxies ?? (config.mode === 'development' ? [...LOOPBACK_PROXIES] : []),
  }));

/** What works but deserves the operator's attention (check-config prints it, start and reload log it), one line each. */
export function configWarnings(config: Pick<Config, 'providers'>): string[] {
  return config.providers.flatMap((provider, index) => providerWarnings(provider).map((warning) => `providers[${index}] (${provider.id}).${warning}`));
}

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export type AppConfig = z.output<typeof appSchema>;

export { groupPrefix, issuerUrl, providerSchema, providerPresets, providerKinds } from '@gatehouse/contract';
export { providerWarnings, testOnlySettings } from './providers/trust.js';
export type { CommonProviderConfig, ProviderConfig, ProviderKind, ProviderOf } from '@gatehouse/contract';
