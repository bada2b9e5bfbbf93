import type { ForwardAuthSetup } from '@gatehouse/contract';
// The very files docs/deploy/ ships and the end-to-end tests run against Debian's nginx and Caddy,
// bundled as text at build time: what the console shows for an app cannot drift from them.
import caddyfile from '../../../../../../docs/deploy/Caddyfile?raw';
import nginxAppConf from '../../../../../../docs/deploy/nginx-app.conf?raw';
import nginxConf from '../../../../../../docs/deploy/nginx.conf?raw';
import traefikYml from '../../../../../../docs/deploy/traefik.yml?raw';

/** The part of an app a proxy's configuration is filled in from. */
export interface ProxiedAppFacts {
  id: string;
  publicUrl: string;
  upstream?: string | undefined;
}

/** One file to copy: where it goes, and its text with this app's values in it. */
export interface ProxyFile {
  /** Where it goes on Debian, or what it is. */
  name: string;
  text: string;
}

export interface ProxySnippet {
  proxy: 'nginx' | 'Caddy' | 'Traefik';
  /** The guide in docs/deploy/ that explains every line. */
  guide: string;
  files: ProxyFile[];
  /** Placeholders left for the operator (where the proxy reaches the app, when Gatehouse does not know). */
  unfilled: string[];
  /** How this proxy's configuration writes where it reaches the app, e.g. `127.0.0.1:8080`. */
  upstreamExample: string;
}

/** The placeholder for where the proxy reaches the app: left as it is when the app has no upstream. */
export const APP_UPSTREAM = 'APP_UPSTREAM';

/**
 * A template with each placeholder (a whole word, as the guides' `sed` lines replace it) swapped for
 * its value. The templates' opening comment, which lists the placeholders, is left out: the page says
 * what each one became.
 */
export function fillTemplate(template: string, values: Readonly<Record<string, string>>): string {
  let text = withoutHeader(template);
  for (const [placeholder, value] of Object.entries(values)) text = text.replace(new RegExp(`\\b${placeholder}\\b`, 'g'), () => value);
  return text;
}

/** The template without its first comment block (every line up to the first blank one that is a comment). */
function withoutHeader(template: string): string {
  const lines = template.split('\n');
  let first = 0;
  while (first < lines.length && lines[first]!.startsWith('#')) first++;
  while (first < lines.length && lines[first]!.trim() === '') first++;
  return first > 0 && lines.slice(0, first).every((line) => line.startsWith('#') || line.trim() === '') ? lines.slice(first).join('\n') : template;
}

/** `host:port` of a URL, the port written out (nginx's `server` and Caddy's upstream take that form). */
function hostAndPort(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/**
 * What nginx, Caddy and Traefik need for this app, from the shipped templates: the app's host and id,
 * where Gatehouse listens, and where the proxy reaches the app (the app's upstream, when Gatehouse
 * knows one; otherwise APP_UPSTREAM stays for the operator to fill in).
 */
export function proxySnippets(app: ProxiedAppFacts, setup: Pick<ForwardAuthSetup, 'gatehouseAddress'>): ProxySnippet[] {
  const url = new URL(app.publicUrl);
  const https = url.protocol === 'https:';
  const port = url.port || (https ? '443' : '80');
  // nginx: TLS on 443 (the certificate lines are in the file); plain http on the app's own port.
  const listen = https ? `${port} ssl` : port;
  // Caddy: a host name alone gets a certificate and an http→https redirect; plain http says so.
  const siteAddress = https ? (url.port ? url.host : url.hostname) : `http://${url.host}`;
  const upstream = app.upstream ? new URL(app.upstream) : undefined;
  const unfilled = upstream ? [] : [APP_UPSTREAM];
  const common = { APP_ID: app.id, GATEHOUSE_UPSTREAM: setup.gatehouseAddress };
  const upstreamUrl: Record<string, string> = upstream ? { [APP_UPSTREAM]: app.upstream!.replace(/\/$/, '') } : {};
  // nginx's upstream block takes host:port; an https app's scheme goes on location /'s proxy_pass, which
  // names the app's pool (gatehouse-app-<id>). A base path does not: with a path there, nginx would send
  // the app its normalised path, not the one Gatehouse judged (X-Forwarded-Uri is the request as sent).
  let nginxApp = fillTemplate(nginxAppConf, { LISTEN: listen, SERVER_NAME: url.hostname, APP_ID: app.id, ...(upstream ? { [APP_UPSTREAM]: hostAndPort(upstream) } : {}) });
  if (upstream?.protocol === 'https:') nginxApp = nginxApp.replace(`proxy_pass http://gatehouse-app-${app.id};`, () => `proxy_pass https://gatehouse-app-${app.id};`);
  return [
    {
      proxy: 'nginx',
      guide: 'docs/deploy/nginx.md',
      files: [
        // Once for every app: it holds `upstream gatehouse`, whose name may be defined only once. An app
        // on a port no other app uses needs only another copy of its default server.
        { name: `/etc/nginx/conf.d/gatehouse.conf (once, shared by every app)`, text: fillTemplate(nginxConf, { LISTEN: listen, GATEHOUSE_UPSTREAM: setup.gatehouseAddress }) },
        { name: `/etc/nginx/conf.d/gatehouse-${app.id}.conf`, text: nginxApp },
      ],
      unfilled,
      upstreamExample: '127.0.0.1:8080',
    },
    {
      proxy: 'Caddy',
      guide: 'docs/deploy/caddy.md',
      // Caddy's upstream is host:port (it also takes a URL, but not one with a path).
      files: [{ name: 'A site block of /etc/caddy/Caddyfile', text: fillTemplate(caddyfile, { SITE_ADDRESS: siteAddress, ...common, ...(upstream ? { [APP_UPSTREAM]: upstream.host } : {}) }) }],
      unfilled,
      upstreamExample: '127.0.0.1:8080',
    },
    {
      proxy: 'Traefik',
      guide: 'docs/deploy/traefik.md',
      files: [{ name: `/etc/traefik/dynamic/gatehouse-${app.id}.yml`, text: fillTemplate(traefikYml, { SERVER_NAME: url.hostname, ...common, ...upstreamUrl }) }],
      unfilled,
      upstreamExample: 'http://127.0.0.1:8080',
    },
  ];
}
