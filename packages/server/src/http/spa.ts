import { negotiate } from '@fastify/accept-negotiator';
import { pages } from '@gatehouse/contract';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { htmlPage } from './html.js';

/** Routes the React app renders; anything else unknown is a real 404 from the server. */
const SPA_PAGES = [pages.home.path, pages.signIn.path, pages.account.path, pages.signedOut.path, pages.authorize.path];
/** The admin console's pages (the React router has the detail). */
const ADMIN_PAGES = ['/admin', '/admin/*'];
/** Pages that need a session: without one, the server sends the person to sign in (works without JS). */
const SIGNED_IN_PAGES = new Set<string>([pages.home.path, pages.account.path, pages.authorize.path]);

export interface SpaOptions {
  webRoot: string;
  /** Steps run before a page is sent (the composition root's: /signed-out reads the logout state). */
  before?: Partial<Record<string, preHandlerAsyncHookHandler>>;
}

export async function spaRoutes(app: FastifyInstance, { webRoot, before = {} }: SpaOptions) {
  const built = existsSync(path.join(webRoot, 'index.html'));
  if (!built) app.log.warn({ webRoot }, 'front end not built: run `npm run build`');
  const indexHtml = built ? readPage(webRoot, 'index.html') : notBuiltPage();
  // The sign-in page is an entry of its own: two buttons need none of the console's libraries. (A
  // build without it is an older one, whose app still draws the sign-in page itself.)
  const signInHtml = built && existsSync(path.join(webRoot, SIGN_IN_HTML)) ? readPage(webRoot, SIGN_IN_HTML) : indexHtml;

  if (built) {
    await app.register(fastifyStatic, {
      root: webRoot,
      prefix: '/',
      index: false,
      // Routes are registered per file at start, so unknown paths reach the 404 handler. Source maps
      // never get one (the build makes none; one left in the folder is not published with the source),
      // nor do the compressed copies: they are sent in place of their file, not under their own name.
      wildcard: false,
      globIgnore: ['**/*.map', '**/*.br', '**/*.gz'],
      // The build writes a brotli and a gzip copy of each text file: sent as they are to a client that
      // accepts them (with `Vary: Accept-Encoding`), nothing compressed on a request.
      preCompressed: true,
      setHeaders(reply, filePath) {
        // Vite fingerprints everything under assets/: cache it for good. Anything else is checked each time.
        const hashed = filePath.includes(`${path.sep}assets${path.sep}`);
        reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  }

  const sendIndex = (reply: FastifyReply, page = indexHtml) => sendPage(reply, page);

  // Pages that need a session send a signed-out person to sign in (it works without JS); the admin
  // console's only to admins, others get the server's 403 page. Declared, and enforced by the guard.
  for (const page of ADMIN_PAGES) {
    app.get(page, { config: { access: 'admin', whenSignedOut: signInFirst } }, async (_request, reply) => sendIndex(reply));
  }
  for (const page of SPA_PAGES) {
    const access = SIGNED_IN_PAGES.has(page) ? 'session' : 'public';
    const preHandler = before[page];
    const html = page === pages.signIn.path ? signInHtml : indexHtml;
    app.get(page, { config: { access, whenSignedOut: signInFirst }, ...(preHandler ? { preHandler } : {}) }, async (_request, reply) => sendIndex(reply, html));
  }
}

/** A page of the build, with the compressed copies the build wrote beside it. */
interface Page {
  identity: Buffer;
  br?: Buffer | undefined;
  gzip?: Buffer | undefined;
}

const SIGN_IN_HTML = 'sign-in.html';

function readPage(webRoot: string, name: string): Page {
  const file = path.join(webRoot, name);
  const copy = (suffix: string) => (existsSync(`${file}${suffix}`) ? readFileSync(`${file}${suffix}`) : undefined);
  return { identity: readFileSync(file), br: copy('.br'), gzip: copy('.gz') };
}

/** A page never cached without asking, compressed as the client accepts (brotli first) when the build made a copy. */
function sendPage(reply: FastifyReply, page: Page | string): FastifyReply {
  reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache');
  if (typeof page === 'string') return reply.send(page);
  const offered = (['br', 'gzip'] as const).filter((encoding) => page[encoding] !== undefined);
  if (offered.length === 0) return reply.send(page.identity);
  reply.header('vary', 'Accept-Encoding');
  const accepted = reply.request.headers['accept-encoding'];
  const encoding = accepted ? (negotiate(accepted, offered) as 'br' | 'gzip' | null) : null;
  if (!encoding) return reply.send(page.identity);
  return reply.header('content-encoding', encoding).send(page[encoding]);
}

/** Sign in first, then come back to the page asked for. */
export function signInFirst(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').redirect(`${pages.signIn.path}?rd=${encodeURIComponent(request.url)}`, 303);
}

function notBuiltPage(): string {
  return htmlPage({
    title: 'Front end not built',
    body: '<h1>Front end not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>) to build the web front end.</p>',
  });
}
