import { z } from 'zod';
import { instant } from '../api/common.js';
import { defineRoute } from '../route.js';

export const dashboardRanges = ['24h', '7d'] as const;
export type DashboardRange = (typeof dashboardRanges)[number];

const counts = { signIns: z.number().int(), failures: z.number().int(), denials: z.number().int() };

export const dashboardSchema = z.object({
  range: z.enum(dashboardRanges),
  /** One bucket an hour (24h) or a day (7d), oldest first. */
  buckets: z.array(z.object({ start: instant, ...counts })),
  totals: z.object(counts),
  liveSessions: z.number().int(),
  users: z.number().int(),
  topDeniedApps: z.array(z.object({ app: z.object({ id: z.string(), name: z.string() }), denials: z.number().int() })),
});
export type Dashboard = z.output<typeof dashboardSchema>;

/** `GET /api/admin/dashboard?range=24h|7d`: counts per bucket, totals, live sessions, top denied apps. */
export const getDashboard = defineRoute({
  method: 'GET',
  path: '/api/admin/dashboard',
  access: 'admin',
  tag: 'admin',
  summary: 'Sign-ins, failures and access denials over time; live sessions; top denied apps',
  query: z.object({ range: z.enum(dashboardRanges).default('24h') }),
  responses: { 200: dashboardSchema },
});
