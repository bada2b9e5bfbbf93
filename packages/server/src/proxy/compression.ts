import { negotiate } from '@fastify/accept-negotiator';
import compressible from 'compressible';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { constants, createBrotliCompress, createGzip, type BrotliCompress, type Gzip } from 'node:zlib';

/**
 * Compression of an app's answers on their way to the client, where the client accepts it and the app
 * sent them uncompressed: Gatehouse is the proxy, so nothing in front of it would. Only what gains from
 * it (text, JSON, JavaScript, XML, SVG: `compressible`, from mime-db), at least MIN_BYTES when the
 * length is known, and never:
 * - an event stream: each event must reach the client as it is sent, and a compressor holds bytes back;
 * - an answer already encoded, or marked `Cache-Control: no-transform`;
 * - a HEAD, a 204, a 206 (its byte ranges are of the uncompressed body) or a 304.
 */

export type Encoding = 'br' | 'gzip';

/** Brotli first: smaller at the same speed. zstd is not in this Node's zlib. */
const OFFERED: Encoding[] = ['br', 'gzip'];
/** Below this a compressed answer is hardly smaller, and costs a compressor. */
const MIN_BYTES = 1024;
/**
 * Fast settings, as on-the-fly compression needs. Measured on a 10 kB HTML page, per answer: brotli at
 * quality 2 with a 256 kB window made 1,276 bytes for about 160 µs of CPU (quality 4: 1,307 bytes, ~250
 * µs; gzip -5: 1,387 bytes, ~170 µs), most of it the compressor's own set-up rather than the bytes.
 */
const BROTLI_QUALITY = 2;
const BROTLI_WINDOW_BITS = 18;
const GZIP_LEVEL = 5;

/** The encoding to compress this answer with, or undefined to send it as it came. */
export function encodingFor(request: IncomingMessage, statusCode: number, headers: IncomingHttpHeaders): Encoding | undefined {
  if (request.method === 'HEAD' || statusCode < 200 || statusCode === 204 || statusCode === 206 || statusCode === 304) return undefined;
  const accepted = request.headers['accept-encoding'];
  if (!accepted) return undefined;
  const encoded = headers['content-encoding'];
  if (encoded !== undefined && encoded.toLowerCase() !== 'identity') return undefined;
  const type = headers['content-type'];
  if (!type || /^\s*text\/event-stream\b/i.test(type) || !compressible(type)) return undefined;
  const length = headers['content-length'];
  if (length !== undefined && Number(length) < MIN_BYTES) return undefined;
  if (headers['cache-control'] && /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(headers['cache-control'])) return undefined;
  return (negotiate(accepted, OFFERED) as Encoding | null) ?? undefined;
}

/**
 * The answer's headers once compressed: the encoding named, no length (it is not known yet), `Vary`
 * naming Accept-Encoding (caches must keep both), and a strong ETag made weak, since the bytes differ
 * from those it names (as nginx does).
 */
export function compressedHeaders(headers: IncomingHttpHeaders, encoding: Encoding): IncomingHttpHeaders {
  delete headers['content-length'];
  headers['content-encoding'] = encoding;
  const vary = headers.vary;
  if (!vary) headers.vary = 'Accept-Encoding';
  else if (vary.trim() !== '*' && !/(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(vary)) headers.vary = `${vary}, Accept-Encoding`;
  const etag = headers.etag;
  if (etag?.startsWith('"')) headers.etag = `W/${etag}`;
  return headers;
}

/** A compressor for one answer (`length`: the uncompressed length, when the app gave it). */
export function compressor(encoding: Encoding, length: number | undefined): BrotliCompress | Gzip {
  if (encoding === 'gzip') return createGzip({ level: GZIP_LEVEL });
  return createBrotliCompress({
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      ...(length !== undefined ? { [constants.BROTLI_PARAM_SIZE_HINT]: length } : {}),
    },
  });
}
