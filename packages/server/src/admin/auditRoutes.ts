import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AuditFilter } from '../audit/auditLog.js';
import { errors, pageQuery, type AdminContext } from './context.js';

interface AuditQuery {
  type?: string;
  outcome?: 'success' | 'failure';
  userId?: string;
  appId?: string;
  from?: string;
  to?: string;
  page?: number;
  pageSize?: number;
}

/** The audit log: filtered, paged, and exported as CSV. */
export async function auditRoutes(app: FastifyInstance, { admin }: { admin: AdminContext }) {
  const { audit } = admin.services;
  const { withPeople } = admin;
  const auditFilterQuery = {
    type: { type: 'string', maxLength: 64 },
    outcome: { type: 'string', enum: ['success', 'failure'] },
    userId: { type: 'string', maxLength: 64 },
    appId: { type: 'string', maxLength: 64 },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
  } as const;

  const eventSchema = {
    type: 'object',
    required: ['id', 'time', 'type', 'outcome', 'actor', 'target', 'providerId', 'appId', 'ip', 'userAgent', 'details'],
    properties: {
      id: { type: 'string' },
      time: { type: 'string', format: 'date-time' },
      type: { type: 'string' },
      outcome: { type: 'string', enum: ['success', 'failure'] },
      actor: { type: ['object', 'null'], properties: { id: { type: 'string' }, email: { type: 'string' } } },
      target: { type: ['object', 'null'], properties: { id: { type: 'string' }, email: { type: 'string' } } },
      providerId: { type: ['string', 'null'] },
      appId: { type: ['string', 'null'] },
      ip: { type: ['string', 'null'] },
      userAgent: { type: ['string', 'null'] },
      details: { type: 'object', additionalProperties: true },
    },
  } as const;

  function auditFilter(query: AuditQuery): AuditFilter {
    return {
      type: query.type || undefined,
      outcome: query.outcome,
      userId: query.userId || undefined,
      appId: query.appId || undefined,
      from: query.from ? Date.parse(query.from) : undefined,
      to: query.to ? Date.parse(query.to) : undefined,
    };
  }

  app.get('/api/admin/audit', {
    schema: {
      tags: ['admin'],
      summary: 'The audit log, filtered and paged, newest first',
      querystring: { type: 'object', properties: { ...auditFilterQuery, ...pageQuery } },
      response: {
        200: { type: 'object', required: ['events', 'total', 'page', 'pageSize'], properties: { events: { type: 'array', items: eventSchema }, total: { type: 'integer' }, page: { type: 'integer' }, pageSize: { type: 'integer' } } },
        ...errors,
      },
    },
    handler: async (request) => {
      const query = request.query as AuditQuery & { page: number; pageSize: number };
      const { events, total } = await audit.query(auditFilter(query), query.page, query.pageSize);
      return { events: await withPeople(events), total, page: query.page, pageSize: query.pageSize };
    },
  });

  app.get('/api/admin/audit.csv', {
    schema: { tags: ['admin'], summary: 'The filtered audit log as CSV', querystring: { type: 'object', properties: auditFilterQuery } },
    handler: async (request, reply) => {
      const filter = auditFilter(request.query as AuditQuery);
      reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="gatehouse-audit-${new Date().toISOString().slice(0, 10)}.csv"`);
      const lines = async function* () {
        yield `${['time', 'type', 'outcome', 'actor', 'target', 'provider', 'app', 'ip', 'user_agent', 'details'].join(',')}\r\n`;
        for await (const batch of audit.stream(filter)) {
          for (const event of await withPeople(batch)) {
            yield `${[event.time, event.type, event.outcome, event.actor?.email ?? '', event.target?.email ?? '', event.providerId ?? '', event.appId ?? '', event.ip ?? '', event.userAgent ?? '', JSON.stringify(event.details)]
              .map(csvField)
              .join(',')}\r\n`;
          }
        }
      };
      return reply.send(Readable.from(lines()));
    },
  });
}


/**
 * RFC 4180 quoting, plus a leading apostrophe for values a spreadsheet would run as a formula
 * (CSV injection: "=HYPERLINK(...)" in a user agent or name).
 */
export function csvField(value: string | null | undefined): string {
  let text = value ?? '';
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
