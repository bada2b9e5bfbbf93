import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify's per-request lines ("incoming request", "request completed") at debug instead of info: at
 * info they were nearly every line of the log, and the access log (http/accessLog.ts) is the record of
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
