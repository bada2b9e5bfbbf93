import type { LoggerOptions } from 'pino';
import type { Config } from './config/schema.js';

/**
 * pino options: JSON in production, pretty in development. Requests are logged by path only: a query
 * string can carry an authorization code or state. Cookies, authorization headers and Set-Cookie are
 * redacted wherever they appear.
 */
export function loggerOptions(config: Config): LoggerOptions {
  const pretty = config.log.format === 'pretty' || (config.log.format === 'auto' && config.mode === 'development');
  return {
    level: config.log.level,
    redact: {
      paths: ['req.headers.cookie', 'req.headers.authorization', 'res.headers["set-cookie"]', '*.refresh_token', '*.id_token', '*.access_token', '*.clientSecret'],
      censor: '[redacted]',
    },
    serializers: {
      req(request: { method: string; url: string; hostname?: string; ip?: string }) {
        return { method: request.method, path: request.url.split('?')[0], host: request.hostname, ip: request.ip };
      },
    },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname', singleLine: true } } } : {}),
  };
}
