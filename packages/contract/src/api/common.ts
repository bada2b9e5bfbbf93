import { z } from 'zod';

/** RFC 9457 problem details, the body of every failure (`application/problem+json`). */
export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    /** The stable code from the error catalogue, e.g. `csrf_failed`. */
    code: z.string(),
    /** The reference id that is also in the server's log. */
    reference: z.string(),
    /** The request's field the failure is about, when it is one (a `conflict` on `id` or `publicUrl`). */
    field: z.string().optional(),
  })
  .meta({ id: 'Problem' });
export type Problem = z.output<typeof problemSchema>;

/** An ISO 8601 instant as the server writes it (`Date#toISOString`). */
export const instant = z.iso.datetime();
export const nullableInstant = instant.nullable();
export const nullableString = z.string().nullable();

/**
 * Text a request names that is looked up in the database (an id, a search): at most `max` characters
 * and no NUL, which nothing legitimate contains and PostgreSQL's text refuses (a 500 there, where
 * SQLite would look it up): such a request is malformed (400).
 */
// eslint-disable-next-line no-control-regex -- refusing NUL is the point
export const requestText = (max: number) => z.string().max(max).regex(/^[^\u0000]*$/, 'must not contain a NUL character');

/** A route parameter naming a stored row (a user, a session, an identity, an audit event). */
export const rowId = requestText(64);

export const providerRefSchema = z.object({ id: z.string(), name: z.string() });
export type ProviderRef = z.output<typeof providerRefSchema>;

/** A person as an audit event or a test names them. */
export const userRefSchema = z.object({ id: z.string(), email: z.string() });
export type UserRef = z.output<typeof userRefSchema>;

export const deviceTypes = ['desktop', 'mobile', 'tablet', 'other'] as const;
export type DeviceType = (typeof deviceTypes)[number];
/** What the server made of a session's User-Agent. */
export const deviceSchema = z.object({
  /** "Chrome 156" */
  browser: nullableString,
  /** "Linux" */
  os: nullableString,
  type: z.enum(deviceTypes),
});
export type Device = z.output<typeof deviceSchema>;

/** A session as a person or an admin sees it: never its secret, only its public handle. */
export const sessionViewSchema = z.object({
  id: z.string(),
  createdAt: instant,
  lastSeenAt: instant,
  expiresAt: instant,
  ip: nullableString,
  userAgent: nullableString,
  device: deviceSchema,
  provider: providerRefSchema,
});

/** A linked identity: which provider, which subject there, and when it was linked and last used. */
export const identityViewSchema = z.object({
  id: z.string(),
  provider: providerRefSchema,
  subject: z.string(),
  email: nullableString,
  linkedAt: instant,
  lastUsedAt: nullableInstant,
});

/** Paging of the admin lists: 1-based, up to 200 a page. */
export const pageQuery = {
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
};

/** Audit events carry details whose shape depends on their type; read them defensively. */
export const detailsSchema = z.record(z.string(), z.unknown());

export const outcomes = ['success', 'failure'] as const;
