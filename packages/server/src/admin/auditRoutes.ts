import { Readable } from 'node:stream';
import { parseEmail, routes } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuditFilter } from '../audit/auditLog.js';
import { contractRoute, typed, type ContractQuery } from '../http/contract.js';
import type { AdminContext } from './context.js';

type AuditQuery = Omit<ContractQuery<typeof routes.admin.listAuditEvents>, 'page' | 'pageSize'>;

/** The audit log: filtered, paged, and exported as CSV. */
export async function auditRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'audit' | 'directory' | 'withPeople'> }) {
  const app = typed(instance);
  const { audit, directory } = admin;
  const { withPeople } = admin;

  /**
   * The user filter takes an id or an email (what people know someone by). An email is normalised as
   * a sign-in would and looked up; one that names nobody (or does not parse) is kept as given, which no
   * id equals, so the answer is no events rather than all of them.
   */
  async function userOf(given: string | undefined): Promise<string | undefined> {
    if (!given || !given.includes('@')) return given || undefined;
    const parsed = parseEmail(given);
    return (parsed.ok ? await directory.idByEmail(parsed.email) : undefined) ?? given;
  }

  async function auditFilter(query: AuditQuery): Promise<AuditFilter> {
    return {
      type: query.type || undefined,
      outcome: query.outcome,
      userId: await userOf(query.userId),
      appId: query.appId || undefined,
      from: query.from ? Date.parse(query.from) : undefined,
      to: query.to ? Date.parse(query.to) : undefined,
    };
  }

  app.route({
    ...contractRoute(routes.admin.listAuditEvents),
    handler: async (request) => {
      const { query } = request;
      const { events, total } = await audit.query(await auditFilter(query), query.page, query.pageSize);
      return { events: await withPeople(events), total, page: query.page, pageSize: query.pageSize };
    },
  });

  app.route({
    ...contractRoute(routes.admin.exportAuditCsv),
    handler: async (request, reply) => {
      const filter = await auditFilter(request.query);
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
      return (reply as FastifyReply).send(Readable.from(lines()));
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
