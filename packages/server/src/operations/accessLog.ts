import { once } from 'node:events';
import { pino } from 'pino';
import type { Config } from '../config/schema.js';
import type { Area, Decision } from './metrics.js';

/**
 * The access log: one JSON line per request Gatehouse answers — proxied, forward-auth, the OpenID
 * Provider's, the portal's pages and API — on a destination of its own with a fixed schema
 * (docs/operations/metrics.md, "Access log"), so that it can go to a file or a collector apart from the
 * application log. On by default in production, where per-request lines are its job alone; off by
 * default in development, where the console is for people.
 *
 * What it leaves out is a choice:
 * - the query string, unless `accessLog.query`: authorization codes, state and the tokens of apps that
 *   take them in the URL travel there (the OpenID Provider's own authorization responses and requests
 *   among them), and a log is read by more people than the app's users;
 * - request bodies, always: the token endpoint's carry codes, refresh tokens and client secrets;
 * - the email, unless `accessLog.email`: the user id identifies the person (the console finds them by
 *   it) without putting personal data in every line;
 * - cookies and headers, always: they carry the session.
 */
export interface AccessLogEntry {
  id: string;
  /** Where it was answered, as metrics' `area` label says it. */
  area: Area;
  method: string;
  host: string;
  /** The request target as it is sent on (for forward-auth: the original request's), query included or not as configured. */
  target: string;
  user: { id: string; email: string } | undefined;
  app: string;
  decision: Decision | undefined;
  rule: string | undefined;
  status: number;
  /** Milliseconds until the upstream's answer began, for a proxied request that reached it. */
  upstreamMs: number | undefined;
  totalMs: number;
}

export interface AccessLog {
  write(entry: AccessLogEntry): void;
  /** Writes what is gathered and closes the destination once all is written; for stopping. */
  close(): Promise<void>;
}

/** Whether the access log is on: as configured, else in production only. */
export function accessLogEnabled(config: Pick<Config, 'mode' | 'accessLog'>): boolean {
  return config.accessLog.enabled ?? config.mode === 'production';
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * The access log of this configuration, or undefined when it is off.
 *
 * A busy node writes tens of thousands of lines a second, each a few µs of a forward-auth check that
 * takes tens: so the line is one `JSON.stringify` of a fixed shape (pino's per-call work, its level,
 * bindings and formatters, is for the application log and would double the cost), and lines are
 * gathered here and handed on in blocks of about 16 kB (sonic-boom, pino's destination, measures its
 * whole pending buffer on every write, which would cost more than the line). A block is handed on when
 * full and at least once a second; the price is that a crash (not a stop, which flushes) loses at most a
 * block and a second of lines.
 */
export function createAccessLog(config: Pick<Config, 'mode' | 'accessLog'>): AccessLog | undefined {
  if (!accessLogEnabled(config)) return undefined;
  const { query, email } = config.accessLog;
  const destination = openDestination(config.accessLog.destination);
  let lines: string[] = [];
  let gathered = 0;
  const handOn = () => {
    if (lines.length === 0) return;
    destination.write(lines.join(''));
    lines = [];
    gathered = 0;
  };
  const flushing = setInterval(handOn, FLUSH_INTERVAL_MS).unref();
  const time = isoTime();
  return {
    write(entry) {
      const line = `${JSON.stringify({
        log: 'access',
        time: time(),
        requestId: entry.id,
        area: entry.area,
        method: entry.method,
        host: entry.host,
        path: query ? entry.target : pathOf(entry.target),
        userId: entry.user?.id ?? null,
        ...(email ? { email: entry.user?.email ?? null } : {}),
        app: entry.app || null,
        decision: entry.decision ?? null,
        rule: entry.rule ?? null,
        status: entry.status,
        upstreamMs: entry.upstreamMs === undefined ? null : round(entry.upstreamMs),
        totalMs: round(entry.totalMs),
      })}\n`;
      lines.push(line);
      // UTF-16 units, not bytes: near enough to size a block.
      gathered += line.length;
      if (gathered >= BLOCK_SIZE) handOn();
    },
    async close() {
      clearInterval(flushing);
      handOn();
      const closed = once(destination, 'close');
      destination.end();
      await closed;
    },
  };
}

function pathOf(target: string): string {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/** The time as ISO 8601 (UTC), formatted once per millisecond rather than once per line. */
function isoTime(): () => string {
  let at = 0;
  let formatted = '';
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      formatted = new Date(now).toISOString();
    }
    return formatted;
  };
}

/** How often gathered lines are written when traffic is too light to fill a block. */
const FLUSH_INTERVAL_MS = 1_000;
/** About sonic-boom's largest single write (16 kB). */
const BLOCK_SIZE = 16 * 1024;

function openDestination(destination: string): ReturnType<typeof pino.destination> {
  // Blocks arrive whole: each is written as it comes.
  const options = { sync: false, minLength: 0 };
  if (destination === 'stdout') return pino.destination({ dest: 1, ...options });
  if (destination === 'stderr') return pino.destination({ dest: 2, ...options });
  return pino.destination({ dest: destination, ...options, mkdir: true, append: true });
}
