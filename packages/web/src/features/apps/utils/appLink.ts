import type { LauncherApp } from '@gatehouse/contract';

/** An app as the launcher shows it: a link, and the host it lives at. */
export interface AppLink {
  id: string;
  name: string;
  href: string;
  /** `whoami.localhost:4180`, shown small under the name. */
  host: string;
}

/**
 * The launcher's card for an app, or undefined when its URL is not an absolute `http:`/`https:` URL.
 * The server builds these URLs from its own configuration, so this never drops a real app; it only keeps
 * a misconfigured value (a `javascript:` URL, a relative path) from becoming a link.
 */
export function toAppLink(app: LauncherApp): AppLink | undefined {
  if (typeof app?.url !== 'string' || typeof app.name !== 'string' || !app.name) return undefined;
  let url: URL;
  try {
    url = new URL(app.url);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return { id: String(app.id), name: app.name, href: url.href, host: url.host };
}
