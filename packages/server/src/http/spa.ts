import { pages } from '@gatehouse/contract';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { adminStatus } from '../accounts/admins.js';
import { sessionGroups, type GroupTrustLookup } from '../accounts/effectiveGroups.js';
import type { Config } from '../config/schema.js';
import { AppError } from '../errors.js';
import { htmlPage } from './html.js';

/** Routes the React app renders; anything else unknown is a real 404 from the server. */
const SPA_PAGES = [pages.home.path, pages.signIn.path, pages.account.path, pages.signedOut.path];
/** The admin console's pages (the React router has the detail). */
const ADMIN_PAGES = ['/admin', '/admin/*'];
/** Pages that need a session: without one, the server sends the person to sign in (works without JS). */
const SIGNED_IN_PAGES = new Set<string>([pages.home.path, pages.account.path]);

/** What the pages take: who the admins are, and the providers' group trust (for the admin console's gate). */
export interface SpaDeps {
  config: Pick<Config, 'admins'>;
  providers: GroupTrustLookup;
}

export async function spaRoutes(app: FastifyInstance, { webRoot, services }: { webRoot: string; services: SpaDeps }) {
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

  // The admin console: only admins get the page at all; others get a 403 page from the server.
  for (const page of ADMIN_PAGES) {
    app.get(page, async (request, reply) => {
      const current = await request.currentSession();
      if (!current) {
        return reply.header('cache-control', 'no-store').redirect(`${pages.signIn.path}?rd=${encodeURIComponent(request.url)}`, 303);
      }
      if (!adminStatus(services.config.admins, current.user, sessionGroups(services.providers, current)).admin) throw new AppError('forbidden');
      return sendIndex(reply);
    });
  }

  for (const page of SPA_PAGES) {
    app.get(page, async (request, reply) => {
      if (SIGNED_IN_PAGES.has(page) && !(await request.currentSession())) {
        return reply.header('cache-control', 'no-store').redirect(`${pages.signIn.path}?rd=${encodeURIComponent(request.url)}`, 303);
      }
      return sendIndex(reply);
    });
  }
}

function notBuiltPage(): string {
  return htmlPage({
    title: 'Front end not built',
    body: '<h1>Front end not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>) to build the web front end.</p>',
  });
}
