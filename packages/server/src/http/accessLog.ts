import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Decision } from './metrics.js';

/**
 * The access log: one JSON line per proxied or forward-auth request, on a logger of its own with a
 * fixed schema (docs/operations/metrics.md, "Access log"), so that it can go to a file or a collector
 * apart from the application log. On by default in production, where per-request lines are its job
 * alone; off by default in development, where the console is for people.
 *
 * What it leaves out is a choice:
 * - the query string, unless `accessLog.query`: authorization codes, state and the tokens of apps that
 *   take them in the URL travel there, and a log is read by more people than the app's users;
 * - the email, unless `accessLog.email`: the user id identifies the person (the console finds them by
 *   it) without putting personal data in every line;
 * - cookies and headers, always: they carry the session.
 */
export interface AccessLogEntry {
  id: string;
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
  /** Writes what is buffered; for stopping. */
  flush(): void;
}

/** Whether the access log is on: as configured, else in production only. */
export function accessLogEnabled(config: Pick<Config, 'mode' | 'accessLog'>): boolean {
  return config.accessLog.enabled ?? config.mode === 'production';
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * The access log of this configuration, or undefined when it is off. `destination` replaces the
 * configured one (tests read the lines from a stream of their own).
 */
export function createAccessLog(config: Pick<Config, 'mode' | 'accessLog'>, destination?: DestinationStream): AccessLog | undefined {
  if (!accessLogEnabled(config)) return undefined;
  const { query, email } = config.accessLog;
  const own = destination ? undefined : openDestination(config.accessLog.destination);
  const logger: Logger = pino(
    {
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      // A fixed schema: no level, no message; each line says it is the access log, then the fields below.
      formatters: { level: () => ({ log: 'access' }) },
    },
    destination ?? own!,
  );
  // Lines are written in blocks (see openDestination), and at least once a second whatever the traffic.
  const flushing = own ? setInterval(() => own.flush(), FLUSH_INTERVAL_MS).unref() : undefined;
  return {
    write(entry) {
      const target = query ? entry.target : pathOf(entry.target);
      logger.info({
        requestId: entry.id,
        method: entry.method,
        host: entry.host,
        path: target,
        userId: entry.user?.id ?? null,
        ...(email ? { email: entry.user?.email ?? null } : {}),
        app: entry.app || null,
        decision: entry.decision ?? null,
        rule: entry.rule ?? null,
        status: entry.status,
        upstreamMs: entry.upstreamMs === undefined ? null : round(entry.upstreamMs),
        totalMs: round(entry.totalMs),
      });
    },
    flush: () => {
      if (flushing) clearInterval(flushing);
      logger.flush();
    },
  };
}

function pathOf(target: string): string {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/** How often buffered lines are written when traffic is too light to fill a block. */
const FLUSH_INTERVAL_MS = 1_000;
/**
 * Lines are written in blocks of about this many bytes rather than one system call each (a busy node
 * writes tens of thousands a second). The price: on a crash (not a stop, which flushes), up to a block
 * and at most a second of lines.
 */
const BLOCK_BYTES = 4096;

function openDestination(destination: string): ReturnType<typeof pino.destination> {
  const options = { sync: false, minLength: BLOCK_BYTES };
  if (destination === 'stdout') return pino.destination({ dest: 1, ...options });
  if (destination === 'stderr') return pino.destination({ dest: 2, ...options });
  return pino.destination({ dest: destination, ...options, mkdir: true, append: true });
}
