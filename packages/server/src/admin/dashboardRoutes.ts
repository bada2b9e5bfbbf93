import type { FastifyInstance } from 'fastify';
import { iso, type AdminContext } from './context.js';

/** Dashboard: sign-ins, failures and denials over time, live sessions, users, top denied apps. */
export async function dashboardRoutes(app: FastifyInstance, { admin }: { admin: AdminContext }) {
  const { audit, database, apps } = admin.services;

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
}
