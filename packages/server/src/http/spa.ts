import { pages } from '@gatehouse/contract';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { htmlPage } from './html.js';

/** Routes the React app renders; anything else unknown is a real 404 from the server. */
const SPA_PAGES = [pages.home.path, pages.signIn.path, pages.account.path, pages.signedOut.path];
/** The admin console's pages (the React router has the detail). */
const ADMIN_PAGES = ['/admin', '/admin/*'];
/** Pages that need a session: without one, the server sends the person to sign in (works without JS). */
const SIGNED_IN_PAGES = new Set<string>([pages.home.path, pages.account.path]);

export interface SpaOptions {
  webRoot: string;
  /** Steps run before a page is sent (the composition root's: /signed-out reads the logout state). */
  before?: Partial<Record<string, preHandlerAsyncHookHandler>>;
}

export async function spaRoutes(app: FastifyInstance, { webRoot, before = {} }: SpaOptions) {
  const indexFile = path.join(webRoot, 'index.html');
  const built = existsSync(indexFile);
  if (!built) app.log.warn({ webRoot }, 'front end not built: run `npm run build`');
  const indexHtml = built ? readFileSync(indexFile, 'utf8') : notBuiltPage();

  if (built) {
    await app.register(fastifyStatic, {
      root: webRoot,
      prefix: '/',
      index: false,
      // Routes are registered per file at start, so unknown paths reach the 404 handler.
      wildcard: false,
      setHeaders(reply, filePath) {
        // Vite fingerprints everything under assets/: cache it for good.
        if (filePath.includes(`${path.sep}assets${path.sep}`)) reply.header('cache-control', 'public, max-age=31536000, immutable');
      },
    });
  }

  const sendIndex = (reply: FastifyReply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(indexHtml);

  // Pages that need a session send a signed-out person to sign in (it works without JS); the admin
  // console's only to admins, others get the server's 403 page. Declared, and enforced by the guard.
  for (const page of ADMIN_PAGES) {
    app.get(page, { config: { access: 'admin', whenSignedOut: signInFirst } }, async (_request, reply) => sendIndex(reply));
  }
  for (const page of SPA_PAGES) {
    const access = SIGNED_IN_PAGES.has(page) ? 'session' : 'public';
    const preHandler = before[page];
    app.get(page, { config: { access, whenSignedOut: signInFirst }, ...(preHandler ? { preHandler } : {}) }, async (_request, reply) => sendIndex(reply));
  }
}

/** Sign in first, then come back to the page asked for. */
function signInFirst(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').redirect(`${pages.signIn.path}?rd=${encodeURIComponent(request.url)}`, 303);
}

function notBuiltPage(): string {
  return htmlPage({
    title: 'Front end not built',
    body: '<h1>Front end not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>) to build the web front end.</p>',
  });
}
