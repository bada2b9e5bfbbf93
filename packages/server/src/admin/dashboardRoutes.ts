import { routes } from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import { contractRoute, typed } from '../http/contract.js';
import { iso } from '../http/isoTime.js';
import type { AdminContext } from './context.js';

/** Dashboard: sign-ins, failures and denials over time, live sessions, users, top denied apps. */
export async function dashboardRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'audit' | 'accounts' | 'sessions' | 'apps'> }) {
  const { audit, accounts, sessions, apps } = admin;

  typed(instance).route({
    ...contractRoute(routes.admin.getDashboard),
    handler: async (request) => {
      const { range } = request.query;
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
      const [liveSessions, users, denied] = await Promise.all([sessions.countLive(), accounts.countUsers(), audit.topDeniedApps(firstBucket * bucketMs, 5)]);
      return {
        range,
        buckets,
        totals: buckets.reduce((sum, b) => ({ signIns: sum.signIns + b.signIns, failures: sum.failures + b.failures, denials: sum.denials + b.denials }), { signIns: 0, failures: 0, denials: 0 }),
        liveSessions,
        users,
        topDeniedApps: denied.map(({ appId, denials }) => ({ app: { id: appId, name: apps.get(appId)?.name ?? appId }, denials })),
      };
    },
  });
}
