import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify's per-request lines ("incoming request", "request completed") at debug instead of info: at
 * info they were nearly every line of the log, and the access log (operations/accessLog.ts) is the record of
 * requests an operator turns on. A request that fails is still logged at error, and the catalogue's
 * answers keep their own lines (http/errorHandler.ts).
 */
export class DebugRequestLogging extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * The request loggers of `app`'s routes (an encapsulated plugin's) log at `floor` or above, and never
 * below the application's level: for endpoints asked so often that their refusals at info would flood
 * the log (forward-auth). A fixed route `logLevel` would be neither: it is set once, when the route is
 * registered, so it would log `warn` lines under `log.level: error` or `silent`, and would not follow a
 * reload. This reads the application's level as each request's logger is made.
 */
export function requestLogsAtLeast(app: FastifyInstance, floor: 'warn' | 'error'): void {
  app.setChildLoggerFactory((logger, bindings, options) => {
    // At or above the floor already: inherit (pino then rebuilds nothing for the request's logger).
    if (LEVELS.indexOf(logger.level) >= LEVELS.indexOf(floor)) return logger.child(bindings, options);
    return logger.child(bindings, { ...options, level: floor });
  });
}
