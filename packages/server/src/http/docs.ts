import { lstatSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { signInFirst } from './spa.js';

/** The address Gatehouse's own documentation is read at: `/docs/deploy/nginx.md` is docs/deploy/nginx.md. */
export const DOCS_PREFIX = '/docs';

/** What the documentation folder holds that is text to read: guides, and the configurations they ship. */
const TEXT = /(?:\.(?:md|conf|ya?ml|json|ini|sh)|\/Caddyfile)$/;

/**
 * Gatehouse's documentation (the repository's docs/ folder), for the console to link to: a preset's
 * registration steps, the proxy guides an app's page names. Each file is sent as plain text (Markdown
 * reads as it is written), to admins only, since the console is the only place that links here and a
 * stranger has no business learning which version answers.
 *
 * Threat: path traversal. What can be read is fixed at start: the regular files under the folder whose
 * names say they are text, found without following a symbolic link. A request is looked up by its
 * literal path in that list, never joined to a folder, so `/docs/../package.json` or an encoded
 * spelling names nothing (404).
 */
export async function docsRoutes(app: FastifyInstance, { root }: { root: string }) {
  const files = documentation(root);
  app.get(`${DOCS_PREFIX}/*`, { config: { access: 'admin', whenSignedOut: signInFirst } }, async (request, reply) => {
    const url = request.raw.url ?? '';
    const query = url.indexOf('?');
    const file = files.get(query === -1 ? url : url.slice(0, query));
    // (A file gone since start is not there either.)
    const text = file === undefined ? undefined : await readFile(file).catch(() => undefined);
    if (text === undefined) throw new AppError('not_found');
    return reply
      .header('cache-control', 'no-cache')
      // Shown as text, never run: nothing in it is a page of this origin.
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('x-content-type-options', 'nosniff')
      .type('text/plain; charset=utf-8')
      .send(text);
  });
}

/** Every text file under `root` by the address it is read at; none when the folder is not there. */
export function documentation(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string, at: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const file = path.join(dir, name);
      const address = `${at}/${name}`;
      const stat = lstatSync(file);
      if (stat.isDirectory()) walk(file, address);
      else if (stat.isFile() && TEXT.test(address)) files.set(address, file);
    }
  };
  walk(root, DOCS_PREFIX);
  return files;
}
