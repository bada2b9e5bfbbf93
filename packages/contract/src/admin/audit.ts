import { z } from 'zod';
import { detailsSchema, instant, outcomes, pageQuery, requestText, rowId, userRefSchema } from '../api/common.js';
import { auditEventType } from '../definitions/auditEventTypes.js';
import { defineRoute } from '../route.js';

/** One line of the audit log. */
export const auditEventSchema = z.object({
  id: z.string(),
  time: instant,
  /**
   * One of `auditEventTypes`. Read back as stored, not narrowed: a row another version of Gatehouse
   * wrote (one rolled back from) still shows, as its name in words, rather than failing the whole page.
   */
  type: z.string(),
  outcome: z.enum(outcomes),
  /** Who did it; null for the system (an expiry) or someone not signed in. */
  actor: userRefSchema.nullable(),
  /** Whom it concerned, when that is not the actor. */
  target: userRefSchema.nullable(),
  providerId: z.string().nullable(),
  /** The protected app it concerned (access_denied), if any. */
  appId: z.string().nullable(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  /** Depends on the type (`app` for access_denied, `before`/`after` for admin changes). */
  details: detailsSchema,
});
export type AuditEvent = z.output<typeof auditEventSchema>;

/** The audit filters, shared by the paged list and the CSV export. */
export const auditFilterQuery = {
  /**
   * Only a type Gatehouse records (`auditEventTypes`): another name is a malformed request (400), not an
   * empty page. Empty means any type, as an absent one does.
   */
  type: z.union([auditEventType, z.literal('')]).optional(),
  outcome: z.enum(outcomes).optional(),
  /** A user's id, or their email (as people know them): events where they acted or were acted on. */
  userId: requestText(254).optional(),
  appId: rowId.optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
};

/** `GET /api/admin/audit?type=&userId=&outcome=&from=&to=&page=&pageSize=`: newest first. */
export const listAuditEvents = defineRoute({
  method: 'GET',
  path: '/api/admin/audit',
  access: 'admin',
  tag: 'admin',
  summary: 'The audit log, filtered and paged, newest first',
  query: z.object({ ...auditFilterQuery, ...pageQuery }),
  responses: { 200: z.object({ events: z.array(auditEventSchema), total: z.number().int(), page: z.number().int(), pageSize: z.number().int() }) },
});
export type AuditPage = z.output<(typeof listAuditEvents.responses)[200]>;
export type AuditQuery = z.input<typeof listAuditEvents.query>;

/** `GET /api/admin/audit.csv` with the audit filters: the same events as a CSV download (a link, not fetch). */
export const exportAuditCsv = defineRoute({
  method: 'GET',
  path: '/api/admin/audit.csv',
  access: 'admin',
  tag: 'admin',
  summary: 'The filtered audit log as CSV',
  produces: 'text/csv',
  query: z.object(auditFilterQuery),
  responses: { 200: z.string() },
});
