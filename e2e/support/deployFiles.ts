import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The files people copy from docs/deploy/, rendered as the guides' `sed` lines render them: only the
 * placeholders are substituted. Used by the end-to-end tests and by the integration tests that run
 * Debian's nginx (no Playwright here).
 */

export const deployDir = fileURLToPath(new URL('../../docs/deploy/', import.meta.url));

/**
 * Replaces each placeholder (a whole word such as GATEHOUSE_UPSTREAM) everywhere in a documented
 * config. A placeholder the file no longer has is an error: the docs and the tests must not drift.
 */
export function renderTemplate(file: string, substitutions: Record<string, string>, folder = deployDir): string {
  let text = readFileSync(path.join(folder, file), 'utf8');
  for (const [placeholder, value] of Object.entries(substitutions)) {
    const pattern = new RegExp(`\\b${placeholder}\\b`, 'g');
    if (!pattern.test(text)) throw new Error(`${path.relative(path.join(deployDir, '../..'), path.join(folder, file))} has no placeholder ${placeholder}`);
    text = text.replace(pattern, () => value);
  }
  return text;
}

/** One app behind nginx: a server block of its own, from nginx-app.conf. */
export interface NginxApp {
  /** The app's id in gatehouse.yaml. */
  id: string;
  /** Its host name, and where nginx listens for it (`127.0.0.1:<port>`). */
  host: string;
  listen: string;
  /** Where nginx reaches the app, host:port. */
  upstream: string;
}

/**
 * What goes in nginx's http {} block: docs/deploy/nginx.conf once (its default server on `listen`, its
 * `upstream gatehouse` at `gatehouse`, host:port) and docs/deploy/nginx-app.conf once per app.
 */
export function renderNginxSite(options: { listen: string; gatehouse: string; apps: readonly NginxApp[] }): string {
  return [
    renderTemplate('nginx.conf', { LISTEN: options.listen, GATEHOUSE_UPSTREAM: options.gatehouse }),
    ...options.apps.map((app) => renderTemplate('nginx-app.conf', { LISTEN: app.listen, SERVER_NAME: app.host, APP_ID: app.id, APP_UPSTREAM: app.upstream })),
  ].join('\n');
}
