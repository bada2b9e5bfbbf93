import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { identityClaims } from '../accounts/accountStore.js';
import { adminStatus, effectiveRoles } from '../accounts/admins.js';
import { parseRoles } from '../accounts/roles.js';
import { describeDevice } from '../api/describeDevice.js';
import type { AuditEntry, AuditFilter, AuditType } from '../audit/auditLog.js';
import { evaluatePolicy, type PolicySubject } from '../authorize/policy.js';
import type { AppConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import { isValidCsrf } from '../sessions/csrf.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { UserDirectory, type UserSummary } from './userDirectory.js';

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const problem = { $ref: 'problem#' } as const;
const errors = { 400: problem, 401: problem, 403: problem, 404: problem, 409: problem } as const;
const pageQuery = {
  page: { type: 'integer', minimum: 1, maximum: 100_000, default: 1 },
  pageSize: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
} as const;
const userSchema = {
  type: 'object',
  required: ['id', 'email', 'name', 'status', 'admin', 'adminFromConfig', 'createdAt', 'lastSignInAt', 'activeSessions'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    status: { type: 'string', enum: ['active', 'suspended'] },
    admin: { type: 'boolean' },
    adminFromConfig: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
    lastSignInAt: { type: ['string', 'null'], format: 'date-time' },
    activeSessions: { type: 'integer' },
  },
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
const auditFilterQuery = {
  type: { type: 'string', maxLength: 64 },
  outcome: { type: 'string', enum: ['success', 'failure'] },
  userId: { type: 'string', maxLength: 64 },
  appId: { type: 'string', maxLength: 64 },
  from: { type: 'string', format: 'date-time' },
  to: { type: 'string', format: 'date-time' },
} as const;

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

/**
 * The admin API (`/api/admin/...`): every route checks the admin role, every change also CSRF, and
 * every change is an audit event with before/after.
 */
export async function adminRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { config, sessions, audit, database, providers, apps } = services;
  const directory = new UserDirectory(database.db, config.admins);

  app.addHook('onRequest', async (request) => {
    const current = await request.currentSession();
    if (!current) throw new AppError('unauthenticated');
    if (!adminStatus(config.admins, current.user, current.claims.groups).admin) throw new AppError('forbidden');
    if (!SAFE_METHODS.has(request.method) && !isValidCsrf(request, services.portalOrigin, services.secrets.cookieKey, current.session)) {
      throw new AppError('csrf_failed');
    }
  });
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  const actorOf = async (request: FastifyRequest) => (await request.currentSession())!;

  /** Emails for the actor/target ids of a page of events (one query). */
  async function withPeople(events: AuditEntry[]) {
    const ids = [...new Set(events.flatMap((event) => [event.actorUserId, event.targetUserId]).filter((id): id is string => Boolean(id)))];
    const people = ids.length > 0 ? await database.db.selectFrom('users').select(['id', 'email']).where('id', 'in', ids).execute() : [];
    const byId = new Map(people.map((person) => [person.id, person]));
    const person = (id: string | null) => (id ? (byId.get(id) ?? { id, email: '' }) : null);
    return events.map((event) => ({ ...event, time: iso(event.time), actor: person(event.actorUserId), target: person(event.targetUserId) }));
  }

  function summary(user: UserSummary) {
    return { ...user, createdAt: iso(user.createdAt), lastSignInAt: iso(user.lastSignInAt) };
  }

  async function existingUser(id: string) {
    const user = await directory.get(id);
    if (!user) throw new AppError('not_found');
    return user;
  }

  app.get('/api/admin/dashboard', {
    schema: {
      tags: ['admin'],
      summary: 'Sign-ins, failures and access denials over time; live sessions; top denied apps',
      querystring: { type: 'object', properties: { range: { type: 'string', enum: ['24h', '7d'], default: '24h' } } },
    },
    handler: async (request) => {
      const range = (request.query as { range: '24h' | '7d' }).range;
      const bucketMs = range === '24h' ? 3_600_000 : 86_400_000;
      const count = range === '24h' ? 24 : 7;
      const firstBucket = Math.floor(Date.now() / bucketMs) - count + 1;
      const counts = await audit.countsByBucket(['sign_in', 'sign_in_failed', 'access_denied'], firstBucket * bucketMs, bucketMs);
      const buckets = Array.from({ length: count }, (_, i) => ({ start: iso((firstBucket + i) * bucketMs), signIns: 0, failures: 0, denials: 0 }));
      for (const { bucket, type, n } of counts) {
        const slot = buckets[bucket - firstBucket];
        if (!slot) continue;
        if (type === 'sign_in') slot.signIns += n;
        else if (type === 'sign_in_failed') slot.failures += n;
        else slot.denials += n;
      }
      const now = Date.now();
      const [live, users, denied] = await Promise.all([
        database.db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('revoked_at', 'is', null)
          .where('idle_expires_at', '>', now)
          .where('absolute_expires_at', '>', now)
          .executeTakeFirstOrThrow(),
        database.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
        database.db
          .selectFrom('audit_events')
          .select(['app_id', (eb) => eb.fn.countAll<number | string>().as('n')])
          .where('type', '=', 'access_denied')
          .where('time', '>=', firstBucket * bucketMs)
          .where('app_id', 'is not', null)
          .groupBy('app_id')
          .orderBy('n', 'desc')
          .limit(5)
          .execute(),
      ]);
      return {
        range,
        buckets,
        totals: buckets.reduce((sum, b) => ({ signIns: sum.signIns + b.signIns, failures: sum.failures + b.failures, denials: sum.denials + b.denials }), { signIns: 0, failures: 0, denials: 0 }),
        liveSessions: Number(live.n),
        users: Number(users.n),
        topDeniedApps: denied.map((row) => ({ app: { id: row.app_id!, name: apps.get(row.app_id!)?.name ?? row.app_id! }, denials: Number(row.n) })),
      };
    },
  });

  app.get('/api/admin/users', {
    schema: {
      tags: ['admin'],
      summary: 'Search and page through users',
      querystring: {
        type: 'object',
        properties: { query: { type: 'string', maxLength: 200 }, status: { type: 'string', enum: ['active', 'suspended'] }, ...pageQuery },
      },
      response: {
        200: { type: 'object', required: ['users', 'total', 'page', 'pageSize'], properties: { users: { type: 'array', items: userSchema }, total: { type: 'integer' }, page: { type: 'integer' }, pageSize: { type: 'integer' } } },
        ...errors,
      },
    },
    handler: async (request) => {
      const { query, status, page, pageSize } = request.query as { query?: string; status?: 'active' | 'suspended'; page: number; pageSize: number };
      const result = await directory.search({ query: query?.trim() || undefined, status }, page, pageSize);
      return { users: result.users.map(summary), total: result.total, page, pageSize };
    },
  });

  app.get('/api/admin/users/:userId', {
    schema: { tags: ['admin'], summary: 'A user with identities, active sessions and audit trail', params: { type: 'object', properties: { userId: { type: 'string', maxLength: 64 } } } },
    handler: async (request) => {
      const user = await existingUser((request.params as { userId: string }).userId);
      const [identities, active, events] = await Promise.all([
        services.accounts.listIdentities(user.id),
        sessions.listActiveForUser(user.id),
        audit.query({ userId: user.id }, 1, 50),
      ]);
      const providerName = (id: string) => providers.get(id)?.name ?? id;
      return {
        user: summary(user),
        identities: identities.map((identity) => ({
          id: identity.id,
          provider: { id: identity.provider_id, name: providerName(identity.provider_id) },
          subject: identity.subject,
          email: identity.email,
          linkedAt: iso(identity.linked_at),
          lastUsedAt: iso(identity.last_used_at),
        })),
        sessions: active.map((session) => ({
          id: session.id,
          createdAt: iso(session.created_at),
          lastSeenAt: iso(session.last_seen_at),
          expiresAt: iso(SessionStore.expiresAt(session)),
          ip: session.ip,
          userAgent: session.user_agent,
          device: describeDevice(session.user_agent),
          provider: { id: session.provider_id, name: providerName(session.provider_id) },
        })),
        events: await withPeople(events.events),
      };
    },
  });

  async function setStatus(request: FastifyRequest, reply: FastifyReply, status: 'active' | 'suspended') {
    const actor = await actorOf(request);
    const before = await existingUser((request.params as { userId: string }).userId);
    if (status === 'suspended' && before.id === actor.user.id) throw new AppError('bad_request', { params: { reason: 'you cannot suspend yourself' } });
    await database.db.updateTable('users').set({ status, updated_at: Date.now() }).where('id', '=', before.id).execute();
    // Suspending ends every session at once (their next request is signed out; caches are invalidated).
    const ended = status === 'suspended' ? await sessions.revokeAllForUser(before.id, 'suspended') : [];
    await audit.record({
      type: status === 'suspended' ? 'user_suspended' : 'user_reactivated',
      actorUserId: actor.user.id,
      targetUserId: before.id,
      sessionId: actor.session.id,
      request,
      details: { before: { status: before.status }, after: { status }, sessionsEnded: ended.length },
    });
    return reply.status(204).send();
  }

  const userParams = { type: 'object', required: ['userId'], properties: { userId: { type: 'string', maxLength: 64 } } } as const;
  app.post('/api/admin/users/:userId/suspend', { schema: { tags: ['admin'], summary: 'Suspend a user (their sessions end now)', params: userParams } }, (request, reply) =>
    setStatus(request, reply, 'suspended'),
  );
  app.post('/api/admin/users/:userId/reactivate', { schema: { tags: ['admin'], summary: 'Reactivate a suspended user', params: userParams } }, (request, reply) =>
    setStatus(request, reply, 'active'),
  );

  app.put('/api/admin/users/:userId/admin', {
    schema: {
      tags: ['admin'],
      summary: 'Grant or remove the admin role',
      params: userParams,
      body: { type: 'object', required: ['admin'], additionalProperties: false, properties: { admin: { type: 'boolean' } } },
    },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { admin } = request.body as { admin: boolean };
      const before = await existingUser((request.params as { userId: string }).userId);
      const row = (await services.accounts.getUser(before.id))!;
      const roles = parseRoles(row.roles).filter((role) => role !== 'admin');
      if (!admin) {
        if (before.adminFromConfig) throw new AppError('admin_from_config');
        if (before.admin && (await directory.adminCount()) <= 1) throw new AppError('last_admin');
      }
      const after = admin ? [...roles, 'admin'] : roles;
      await database.db.updateTable('users').set({ roles: JSON.stringify(after), updated_at: Date.now() }).where('id', '=', before.id).execute();
      // Cached sessions carry the old roles.
      for (const session of await sessions.listActiveForUser(before.id)) services.resolver.invalidate(session.id);
      await audit.record({
        type: admin ? 'admin_granted' : 'admin_revoked',
        actorUserId: actor.user.id,
        targetUserId: before.id,
        sessionId: actor.session.id,
        request,
        details: { before: { roles: parseRoles(row.roles) }, after: { roles: after } },
      });
      return reply.status(204).send();
    },
  });

  app.delete('/api/admin/sessions/:sessionId', {
    schema: { tags: ['admin'], summary: 'Revoke any session', params: { type: 'object', required: ['sessionId'], properties: { sessionId: { type: 'string', maxLength: 64 } } } },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { sessionId } = request.params as { sessionId: string };
      const session = await sessions.findById(sessionId);
      if (!session || !(await sessions.revoke(sessionId, 'revoked-by-admin'))) throw new AppError('not_found');
      await audit.record({
        type: 'session_revoked',
        actorUserId: actor.user.id,
        targetUserId: session.user_id,
        sessionId: actor.session.id,
        request,
        details: { by: 'admin', reason: 'revoked-by-admin', sessionId },
      });
      return reply.status(204).send();
    },
  });

  // Apps and their policies. Apps from gatehouse.yaml are listed read-only ("source": "config").
  const appView = (app: AppConfig) => ({ ...app, source: apps.source(app.id) ?? 'console' });
  const appParams = { type: 'object', required: ['appId'], properties: { appId: { type: 'string', maxLength: 64 } } } as const;

  app.get('/api/admin/apps', {
    schema: { tags: ['admin'], summary: 'Every protected app with its policy; config apps are read-only' },
    handler: async () => ({ apps: apps.all().map(appView) }),
  });

  app.post('/api/admin/apps', {
    schema: { tags: ['admin'], summary: 'Create an app (validated like an apps: entry in gatehouse.yaml)', body: { type: 'object' } },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const created = await services.appStore.create(request.body);
      await recordAppChange(request, actor, 'app_created', created.id, { before: null, after: created });
      return reply.status(201).send(appView(created));
    },
  });

  app.put('/api/admin/apps/:appId', {
    schema: { tags: ['admin'], summary: 'Replace an app created in the console', params: appParams, body: { type: 'object' } },
    handler: async (request) => {
      const actor = await actorOf(request);
      const { appId } = request.params as { appId: string };
      const { before, after } = await services.appStore.update(appId, request.body);
      await recordAppChange(request, actor, 'app_updated', appId, { before, after });
      return appView(after);
    },
  });

  app.delete('/api/admin/apps/:appId', {
    schema: { tags: ['admin'], summary: 'Delete an app created in the console', params: appParams },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { appId } = request.params as { appId: string };
      const before = await services.appStore.remove(appId);
      await recordAppChange(request, actor, 'app_deleted', appId, { before, after: null });
      return reply.status(204).send();
    },
  });

  async function recordAppChange(request: FastifyRequest, actor: CurrentSession, type: AuditType, appId: string, change: { before: unknown; after: unknown }) {
    await audit.record({ type, actorUserId: actor.user.id, sessionId: actor.session.id, appId, request, details: change });
  }

  // The policy tester: would this person (a user, or typed-in claims) reach this app, and which rule decides?
  app.post('/api/admin/policy-test', {
    schema: {
      tags: ['admin'],
      summary: 'Evaluate an app policy for a user or for given claims, naming the rule that decides',
      body: {
        type: 'object',
        required: ['appId'],
        additionalProperties: false,
        properties: {
          appId: { type: 'string', maxLength: 64 },
          userId: { type: 'string', maxLength: 64 },
          subject: {
            type: 'object',
            additionalProperties: false,
            required: ['email'],
            properties: {
              email: { type: 'string', maxLength: 256 },
              groups: { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 500 },
              roles: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 20 },
              claims: { type: 'object', additionalProperties: true },
            },
          },
        },
      },
    },
    handler: async (request) => {
      const body = request.body as { appId: string; userId?: string; subject?: { email: string; groups?: string[]; roles?: string[]; claims?: Record<string, unknown> } };
      const target = apps.get(body.appId);
      if (!target) throw new AppError('not_found');
      let subject: PolicySubject;
      if (body.userId) {
        const user = await services.accounts.getUser(body.userId);
        if (!user) throw new AppError('not_found');
        // The user's groups and claims as their identities last reported them.
        const identities = await services.accounts.listIdentities(user.id);
        const claims = identities.map(identityClaims);
        const groups = [...new Set(claims.flatMap((c) => c.groups))];
        subject = { email: user.email, groups, roles: effectiveRoles(config.admins, user, groups), claims: Object.assign({}, ...claims.map((c) => c.extra ?? {})) };
      } else if (body.subject) {
        subject = { email: body.subject.email, groups: body.subject.groups ?? [], roles: body.subject.roles ?? [], claims: body.subject.claims ?? {} };
      } else {
        throw new AppError('bad_request', { params: { reason: 'give userId or subject' } });
      }
      const decision = evaluatePolicy(target.policy, subject);
      return { allow: decision.allow, reason: decision.reason, decidedBy: decision.decidedBy, subject };
    },
  });

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
