import { z } from 'zod';
import { durationSchema } from './duration.js';
import { isLoopbackHost, parsedUrl } from './urls.js';

/**
 * An app that signs people in with OpenID Connect, with Gatehouse as its OpenID Provider: the `oidc`
 * block of an app (definitions/app.ts). The app's policy decides who may sign in to it, exactly as for a
 * guarded host. Written once here for gatehouse.yaml, the console's API and its form.
 */

/** How a client proves who it is at the token endpoint (OAuth 2.0 `token_endpoint_auth_method`). */
export const OIDC_CLIENT_AUTHENTICATIONS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const;
export type OidcClientAuthentication = (typeof OIDC_CLIENT_AUTHENTICATIONS)[number];

/** The scopes a client may be allowed. `openid` is always among them. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access'] as const;
export type OidcScope = (typeof OIDC_SCOPES)[number];

/** The ID token signing algorithms Gatehouse offers (OpenID Connect Discovery requires RS256). */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'ES256'] as const;

/** A client id: what apps are configured with, visible in URLs (RFC 6749 `client_id`, a safe subset). */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,99}$/;

/** Client secrets a config file gives (from the environment): long enough not to be guessed. */
export const MIN_CLIENT_SECRET_LENGTH = 32;

/**
 * A redirect URI, compared by Gatehouse character for character with what the app sends (OAuth 2.0
 * Security BCP: exact matching): https, or plain http only to a loopback host (RFC 8252 for apps on
 * the person's own machine). Never a fragment, credentials or a wildcard.
 */
export const redirectUriSchema = z
  .string()
  .max(2000)
  .superRefine((value, ctx) => {
    const url = parsedUrl(value);
    if (!url || !/^https?:$/.test(url.protocol)) return ctx.addIssue({ code: 'custom', message: 'must be an absolute https URL' });
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) ctx.addIssue({ code: 'custom', message: 'must use https (plain http only to localhost or 127.0.0.1)' });
    if (url.hash || value.includes('#')) ctx.addIssue({ code: 'custom', message: 'must not have a fragment' });
    if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'must not hold credentials' });
    if (value.includes('*')) ctx.addIssue({ code: 'custom', message: 'must be exact: wildcards are not supported' });
    // What the app sends is compared as written: a URI that URL parsing would rewrite (case, dot segments,
    // default ports) would never match, so it is refused here with the form it would have to take.
    else if (url.href !== value && url.href !== `${value}/`) ctx.addIssue({ code: 'custom', message: `must be written in its normal form: ${url.href}` });
  });

/** The members of a JWK that hold private or symmetric key material (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

const distinct = <T,>(values: readonly T[]) => new Set(values).size === values.length;

export const oidcClientSchema = z
  .object({
    /** The `client_id` the app is configured with; the app's id when left out. */
    clientId: z.string().regex(CLIENT_ID_PATTERN, 'must be letters, digits, ".", "_", "~" or "-" (at most 100)').optional(),
    /**
     * How the client authenticates at the token endpoint: a secret (`client_secret_basic`, the default,
     * or `client_secret_post`), a JWT signed with its own key (`private_key_jwt`, with `jwksUri` or
     * `jwks`), or nothing (`none`: a public client, a single-page or native app, which must use PKCE).
     */
    authentication: z.enum(OIDC_CLIENT_AUTHENTICATIONS).default('client_secret_basic'),
    /**
     * Only in gatehouse.yaml, usually from the environment (`${GRAFANA_OIDC_SECRET}`): the client's
     * secrets, at most two (the current one and the next, while an app is being moved to it). Gatehouse
     * keeps only their hashes. Console clients have secrets Gatehouse generates, shown once.
     */
    secrets: z
      .array(z.string().min(MIN_CLIENT_SECRET_LENGTH, `must be at least ${MIN_CLIENT_SECRET_LENGTH} characters`).max(512))
      .max(2, 'at most two secrets: the current one and the next')
      .optional(),
    /** For private_key_jwt: where the client publishes its public keys. */
    jwksUri: z.url({ protocol: /^https$/, error: 'must be an https URL' }).optional(),
    /** For private_key_jwt: the client's public keys themselves (a JWK Set). */
    jwks: z
      .object({
        keys: z
          .array(z.record(z.string(), z.unknown()))
          .min(1)
          .max(10)
          // A private key pasted here would be stored with the app and shown back on its page: refused.
          .refine((keys) => keys.every((key) => !PRIVATE_JWK_MEMBERS.some((member) => member in key)), 'must hold public keys only (no "d", "p", "q", "dp", "dq", "qi" or "k")'),
      })
      .optional(),
    /** Where the app may ask to be sent back with a code: each compared exactly. */
    redirectUris: z.array(redirectUriSchema).min(1, 'at least one redirect URI').max(20).refine(distinct, 'must not list a URI twice'),
    /** Where the app may ask to be sent after signing out at Gatehouse (RP-Initiated Logout). */
    postLogoutRedirectUris: z.array(redirectUriSchema).max(20).refine(distinct, 'must not list a URI twice').default([]),
    /** Where Gatehouse posts a logout token when the person's Gatehouse session ends (Back-Channel Logout). */
    backchannelLogoutUri: redirectUriSchema.optional(),
    /** The scopes the client may be granted; what it asks beyond them is left out. */
    scopes: z
      .array(z.enum(OIDC_SCOPES))
      .min(1)
      .refine(distinct, 'must not list a scope twice')
      .refine((scopes) => scopes.includes('openid'), 'must include openid')
      .default(['openid', 'profile', 'email', 'groups']),
    /**
     * A third-party client: people are asked to consent before Gatehouse tells it who they are. Apps of
     * the organisation (the default) skip the question.
     */
    thirdParty: z.boolean().default(false),
    /** `public`: one `sub` per person for every client; `pairwise`: a different one per client, unlinkable across clients. */
    subject: z.enum(['public', 'pairwise']).default('public'),
    /** How ID tokens are signed for this client (RS256 unless the app supports ES256). */
    idTokenAlgorithm: z.enum(ID_TOKEN_ALGORITHMS).default('RS256'),
    /**
     * Put the claims of the granted scopes (email, name, groups) in the ID token too, not only at the
     * userinfo endpoint: many apps (Grafana, Argo CD) read groups from the ID token. On by default.
     */
    claimsInIdToken: z.boolean().default(true),
    /** Token lifetimes. A refresh token lasts as long as the Gatehouse session it belongs to, at most this. */
    accessTokenLifetime: durationSchema.default(600_000),
    idTokenLifetime: durationSchema.default(3_600_000),
    refreshTokenLifetime: durationSchema.default(14 * 86_400_000),
  })
  .strict()
  .superRefine((client, ctx) => {
    const secret = client.authentication === 'client_secret_basic' || client.authentication === 'client_secret_post';
    if (!secret && client.secrets) ctx.addIssue({ code: 'custom', path: ['secrets'], message: `a client using ${client.authentication} has no secret` });
    if (client.authentication === 'private_key_jwt' && !client.jwksUri === !client.jwks)
      ctx.addIssue({ code: 'custom', path: ['jwksUri'], message: 'private_key_jwt needs the client’s keys: give jwksUri or jwks (one of them)' });
    if (client.authentication !== 'private_key_jwt' && (client.jwksUri || client.jwks))
      ctx.addIssue({ code: 'custom', path: [client.jwksUri ? 'jwksUri' : 'jwks'], message: 'only a client using private_key_jwt has keys of its own' });
  });

export type OidcClientDefinition = z.output<typeof oidcClientSchema>;
export type OidcClientDefinitionInput = z.input<typeof oidcClientSchema>;
