/**
 * Every header Gatehouse never takes from a client (proxy/upstreamHeaders.ts), as their authors spell
 * them: written out here on their own, so the tests do not read the list they check.
 */
export
const FAMILY = [
  // Rewrite: the path an app would serve instead of the request line's.
  'X-Original-URL',
  'X-Rewrite-URL',
  'X-Original-URI',
  'X-Forwarded-Uri',
  'X-Forwarded-Prefix',
  'X-Forwarded-Path',
  'X-Envoy-Original-Path',
  'X-Script-Name',
  // Client address.
  'Forwarded',
  'X-Forwarded-For',
  'X-Real-IP',
  'X-Client-IP',
  'True-Client-IP',
  'X-Cluster-Client-IP',
  'Client-IP',
  'CF-Connecting-IP',
  'Fastly-Client-IP',
  'X-ProxyUser-Ip',
  'X-Originating-IP',
  'X-Remote-IP',
  'X-Remote-Addr',
  // Host, scheme, port, server.
  'X-Forwarded-Host',
  'X-Forwarded-Proto',
  'X-Forwarded-Port',
  'X-Forwarded-Server',
  'X-Forwarded-Scheme',
  'X-Forwarded-Ssl',
  'Front-End-Https',
  'X-Url-Scheme',
  'X-Scheme',
  'X-Original-Host',
  'X-Host',
  // Method.
  'X-HTTP-Method-Override',
  'X-HTTP-Method',
  'X-Method-Override',
  'X-Original-Method',
  'X-Forwarded-Method',
  // More client-address, scheme and host variants.
  'X-Forwarded',
  'Forwarded-For',
  'X-Original-Forwarded-For',
  'CF-Connecting-IPv6',
  'CF-Pseudo-IPv4',
  'X-Envoy-External-Address',
  'X-Azure-ClientIP',
  'X-Azure-SocketIP',
  'X-AppEngine-User-IP',
  'X-Forwarded-Protocol',
  'X-HTTP-Host-Override',
] as const;

/** A header name as servers that read "_" as "-" see it, in lower case. */
export const canonical = (name: string) => name.toLowerCase().replaceAll('_', '-');
