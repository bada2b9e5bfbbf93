import { z } from 'zod';
import { defineRoute } from '../route.js';
import { discoveryStatuses } from '../admin/providers.js';
import { providerAvailabilities } from './session.js';
import { instant } from './common.js';

/**
 * The configuration this process runs with: its file, when it was read, and the last reload (SIGHUP
 * or the console). A refused reload keeps the node ready (it serves with the configuration before)
 * and says why here until the next attempt.
 */
export const configStateSchema = z.object({
  /** The file it was read from; null for the built-in development defaults. */
  file: z.string().nullable(),
  loadedAt: instant,
  lastReload: z
    .object({
      at: instant,
      outcome: z.enum(['applied', 'unchanged', 'refused']),
      /** Why it was refused, one line per problem. */
      problems: z.array(z.string()).optional(),
    })
    .nullable(),
});
export type ConfigState = z.output<typeof configStateSchema>;

/** `GET /healthz`: the process answers. */
export const getHealth = defineRoute({
  method: 'GET',
  path: '/healthz',
  access: 'public',
  tag: 'operations',
  summary: 'Liveness: the process answers',
  responses: { 200: z.object({ status: z.literal('ok') }) },
});

/**
 * Each check of readiness. They name the configuration file, the problems of a refused reload and the
 * IdPs' errors (internal hosts among them): shown only to a signed-in admin of the portal and on the
 * metrics listener (`GET /readyz` there), never to a stranger.
 */
export const readinessChecksSchema = z.object({
  database: z.enum(['ok', 'unreachable']),
  /**
   * Whether changes made on other nodes reach this one: `local` (one node: nothing to listen to),
   * `listening`, or `reconnecting` (caches bypassed meanwhile). Reported; it does not decide readiness.
   */
  changes: z.enum(['local', 'listening', 'reconnecting']),
  /**
   * Each enabled provider: its discovery status, and whether its IdP answers now (an active check
   * bounded by a short timeout); `error` says why not. Reported, but it does not decide readiness.
   */
  providers: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      status: z.enum(discoveryStatuses),
      availability: z.enum(providerAvailabilities),
      error: z.string().optional(),
    }),
  ),
  /** The configuration file and its last reload: reported; a refused reload does not decide readiness. */
  config: configStateSchema,
});
export type ReadinessChecks = z.output<typeof readinessChecksSchema>;

const readiness = z.object({
  /** What a load balancer needs, with the HTTP status (200 ready, 503 unavailable): for everyone. */
  status: z.enum(['ready', 'unavailable']),
  /** Only for a signed-in admin of the portal (and always on the metrics listener's `/readyz`). */
  checks: readinessChecksSchema.optional(),
});
export type Readiness = z.output<typeof readiness>;

/**
 * `GET /readyz`: 200 when the database answers, else 503. Anyone gets the status; a signed-in admin
 * also gets each check (the metrics listener's `GET /readyz` always gives them, to whoever reaches it).
 */
export const getReadiness = defineRoute({
  method: 'GET',
  path: '/readyz',
  access: 'public',
  tag: 'operations',
  summary: 'Readiness: the database answers (the status for anyone; each check only for an admin)',
  responses: { 200: readiness, 503: readiness },
});

/**
 * A public signing key (RFC 7517). Only public members are listed: this allow-list is what keeps a
 * private member (`d`, `p`, `q`, …) from ever being published.
 */
export const publicJwkSchema = z.object({
  kty: z.string(),
  kid: z.string().optional(),
  use: z.string().optional(),
  alg: z.string().optional(),
  n: z.string().optional(),
  e: z.string().optional(),
  crv: z.string().optional(),
  x: z.string().optional(),
  y: z.string().optional(),
});

/** `GET /.gatehouse/jwks.json`: the keys apps verify the signed assertion with (portal and app hosts). */
export const getJwks = defineRoute({
  method: 'GET',
  path: '/.gatehouse/jwks.json',
  access: 'public',
  tag: 'operations',
  summary: 'The public keys of the signed assertion apps receive',
  responses: { 200: z.object({ keys: z.array(publicJwkSchema) }) },
});
