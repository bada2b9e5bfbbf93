import type { IncomingMessage } from 'node:http';

/**
 * What is wrong with a request's Host header lines, if anything: none in HTTP/1.1, or more than one
 * (RFC 9112 §3.2 asks a 400 for both). Node's parser lets a repeated Host through with the first value
 * in `headers.host`: a proxy in front that routes on another line than the one Gatehouse decides on
 * would get one app's decision applied to another's request. Gatehouse's server turns Node's own
 * missing-Host answer off (`requireHostHeader: false`) so that both get a catalogue answer from here,
 * WebSocket upgrades too (Node never checked those). Reads the raw header lines once, without building
 * anything: it runs on every request.
 */
export function hostHeaderProblem(request: Pick<IncomingMessage, 'rawHeaders' | 'httpVersionMajor' | 'httpVersionMinor'>): string | undefined {
  const { rawHeaders } = request;
  let seen = false;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (seen) return 'it has more than one Host header';
    seen = true;
  }
  if (!seen && (request.httpVersionMajor > 1 || (request.httpVersionMajor === 1 && request.httpVersionMinor >= 1))) return 'it has no Host header';
  return undefined;
}
