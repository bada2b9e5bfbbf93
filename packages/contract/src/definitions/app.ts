import { z } from 'zod';
import { idSchema } from './ids.js';
import { oidcClientSchema } from './oidcClient.js';
import { policySchema } from './policy.js';
import { httpUrl, originUrl, parsedUrl } from './urls.js';

/**
 * A path pattern that needs no sign-in: "/exact" or "/prefix/*". The server matches it against the
 * normalised path only (never the query).
 */
const publicPath = z
  .string()
  .regex(/^\/[A-Za-z0-9._~!$&'()+,;=:@%/-]*(\/\*)?$/, 'must be a path such as /healthz or /static/* (no query, no wildcards elsewhere)')
  .refine((pattern) => !pattern.includes('..') && !pattern.includes('//') && !pattern.includes('%'), 'must be a plain normalised path');

/** What an app that still says `passAccessToken: true` is told to write instead. */
export const PASS_ACCESS_TOKEN_TRUE =
  'true is no longer accepted: list the providers whose access token this app receives, e.g. passAccessToken: [github] (a token is a credential: an app gets only the tokens of the providers it names)';

/**
 * The providers whose access token an app receives. `false` (what older files wrote for "none") reads
 * as none; `true` ("every provider's") is refused with what to write instead: fail closed, never a
 * guess at which providers were meant.
 */
const passAccessToken = z.preprocess(
  (value) => (value === false ? [] : value),
  z
    .array(idSchema, { error: (issue) => (issue.input === true ? PASS_ACCESS_TOKEN_TRUE : 'must be a list of provider ids, e.g. [github]') })
    .max(50)
    .refine((ids) => new Set(ids).size === ids.length, 'must not name a provider twice'),
);

/** A protected app, as written in gatehouse.yaml (`apps:`) and as the console creates one. */
export const appSchema = z
  .object({
    id: idSchema,
    name: z.string().min(1).max(80),
    /** Where people reach the app: an origin whose host Gatehouse answers for. */
    publicUrl: originUrl,
    /**
     * Where Gatehouse forwards allowed requests (reverse-proxy mode). Left out for an app that nginx,
     * Caddy or Traefik serves and only asks Gatehouse about (forward-auth): Gatehouse then forwards
     * nothing for it, and a request that reaches it on the app's host anyway is answered `no_upstream`.
     */
    upstream: httpUrl
      .refine((value) => {
        const url = parsedUrl(value);
        return !url || (!url.search && !url.hash);
      }, 'must not have a query or fragment')
      .optional(),
    policy: policySchema,
    publicPaths: z.array(publicPath).default([]),
    websockets: z.boolean().default(false),
    /** Let CORS preflights (OPTIONS with Origin and Access-Control-Request-Method) through unauthenticated. */
    corsPreflight: z.boolean().default(false),
    /** Send the app's public Host upstream instead of the upstream's own. */
    preserveHost: z.boolean().default(false),
    /**
     * The providers (ids) whose IdP access token this app receives upstream as `Authorization: Bearer`,
     * for apps that call those providers' APIs as the user; a session signed in through any other
     * provider sends none. Empty by default: an access token is a credential (GitHub's never expire),
     * and most apps only need the identity headers.
     */
    passAccessToken: passAccessToken.default([]),
    /**
     * Compress the app's answers (brotli or gzip, as the client accepts) when it sent them uncompressed:
     * text, JSON, JavaScript, XML and SVG of 1 KB or more, and only for requests from the app's own pages
     * or the person's own navigation (`Sec-Fetch-Site: same-origin` or `none`); never event streams,
     * ranges, or answers marked `Cache-Control: no-transform`. Off by default, the operator's informed
     * choice: compressing an answer that reflects what a request asked for next to a secret (a token,
     * the signed assertion) lets whoever can measure its length recover the secret (BREACH).
     */
    compress: z.boolean().default(false),
    /**
     * Whether Gatehouse guards the app's host: as its reverse proxy (with an upstream) or answering the
     * forward-auth checks of nginx, Caddy or Traefik (without). Off only for an app that signs people
     * in with OpenID Connect alone (`oidc`): Gatehouse then answers nothing on its host.
     */
    guard: z.boolean().default(true),
    /** The app signs people in with OpenID Connect, Gatehouse being its OpenID Provider. */
    oidc: oidcClientSchema.optional(),
  })
  .strict()
  .superRefine((app, ctx) => {
    if (app.guard) return;
    if (!app.oidc) ctx.addIssue({ code: 'custom', path: ['guard'], message: 'an app Gatehouse does not guard must sign people in with OpenID Connect (oidc)' });
    const hostOnly = (['upstream', 'publicPaths', 'websockets', 'corsPreflight', 'preserveHost', 'passAccessToken', 'compress'] as const).filter((key) => {
      const value = app[key];
      return Array.isArray(value) ? value.length > 0 : value !== undefined && value !== false;
    });
    for (const key of hostOnly) ctx.addIssue({ code: 'custom', path: [key], message: 'only for an app whose host Gatehouse guards (guard: true)' });
  });

/** An app definition with its defaults applied. */
export type AppDefinition = z.output<typeof appSchema>;
/** An app definition as a client writes it (defaults may be left out). */
export type AppDefinitionInput = z.input<typeof appSchema>;
