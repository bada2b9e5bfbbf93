import { negotiate } from '@fastify/accept-negotiator';
import compressible from 'compressible';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync, type BrotliCompress, type Gzip } from 'node:zlib';

/**
 * Compression of an app's answers on their way to the client, for an app whose operator turned it on
 * (`compress`, off by default), where the client accepts it and the app sent them uncompressed:
 * Gatehouse is the proxy, so nothing in front of it would. Only what gains from it (text, JSON,
 * JavaScript, XML, SVG: `compressible`, from mime-db), at least MIN_BYTES when the length is known,
 * and never:
 * - an answer to a request that is not the app's own page or the person's own navigation
 *   (`Sec-Fetch-Site` other than `same-origin` or `none`, or none at all): BREACH. A page on another
 *   site can make the browser send requests with the person's cookies and attacker-chosen input; where
 *   the answer reflects that input next to a secret (a token, the signed assertion), the length of the
 *   compressed answer tells whether a guess matched the secret, one character at a time. The attacker
 *   sees only the length of cross-site answers: those are never compressed. A sibling app's host is
 *   `same-site`, so that is refused too; an old browser that sends no `Sec-Fetch-Site` gets the app's
 *   bytes as they are (fail closed);
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
 * Fast settings, as on-the-fly compression needs. Measured on a 10 kB HTML page: brotli at quality 2
 * makes 1,276 bytes (quality 1: 1,775; quality 4: 1,307; gzip -5: 1,387), in about 50 µs of CPU done in
 * one call with a 64 kB window, but about 95 µs with a 256 kB window (the encoder's set-up grows with
 * it) and 130-200 µs as a zlib stream, whose every write is a trip to the thread pool and back.
 */
const BROTLI_QUALITY = 2;
const GZIP_LEVEL = 5;
/**
 * Answers whose length the app gave, up to this, are gathered and compressed in one call (at most a
 * few hundred µs of the event loop) and sent with their compressed length; longer ones, or those of
 * unknown length, are compressed as they stream, with a window of 2^18 bytes.
 */
export const WHOLE_LIMIT = 64 * 1024;
const STREAM_WINDOW_BITS = 18;
const WHOLE_WINDOW_BITS = 16;

/**
 * The only `Sec-Fetch-Site` values whose answers may be compressed (Fetch Metadata Request Headers):
 * the app's own pages, and a navigation the person started (typed, a bookmark). Compared as sent: two
 * header lines (joined by Node) or any other spelling is not one of them.
 */
const COMPRESSIBLE_SITES = new Set(['same-origin', 'none']);

/** What compression makes of an answer: not a candidate at all, or a candidate (compressed with `encoding`, or not for this request). */
export type Compression = { encoding: Encoding | undefined } | undefined;

/**
 * Whether this answer is one compression would take, and the encoding for this request: none when the
 * request is not same-origin or the person's own (BREACH, above) or the client accepts no encoding we
 * offer. A candidate's answer depends on those two request headers, so it names them in `Vary`
 * (`varyOnCompression`), compressed or not.
 */
export function compressionFor(request: IncomingMessage, statusCode: number, headers: IncomingHttpHeaders): Compression {
  if (request.method === 'HEAD' || statusCode < 200 || statusCode === 204 || statusCode === 206 || statusCode === 304) return undefined;
  const encoded = headers['content-encoding'];
  if (encoded !== undefined && encoded.toLowerCase() !== 'identity') return undefined;
  // The length first: for a short answer it is one comparison, where `compressible` parses the media
  // type and looks it up in mime-db (about 0.1 µs per proxied answer). Every check above the
  // Sec-Fetch-Site one says "not a candidate", so their order changes nothing else.
  const length = headers['content-length'];
  if (length !== undefined && Number(length) < MIN_BYTES) return undefined;
  const type = headers['content-type'];
  if (!type || /^\s*text\/event-stream\b/i.test(type) || !compressible(type)) return undefined;
  if (headers['cache-control'] && /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(headers['cache-control'])) return undefined;
  const site = request.headers['sec-fetch-site'];
  const accepted = request.headers['accept-encoding'];
  if (site === undefined || !COMPRESSIBLE_SITES.has(site) || !accepted) return { encoding: undefined };
  return { encoding: (negotiate(accepted, OFFERED) as Encoding | null) ?? undefined };
}

/**
 * The answer's headers once compressed: the encoding named, the length as given (or none, when it is
 * not known yet), `Vary` naming what the choice depended on, and a strong ETag made weak, since the
 * bytes differ from those it names (as nginx does).
 */
export function compressedHeaders(headers: IncomingHttpHeaders, encoding: Encoding, length?: number): IncomingHttpHeaders {
  if (length === undefined) delete headers['content-length'];
  else headers['content-length'] = String(length);
  headers['content-encoding'] = encoding;
  varyOnCompression(headers);
  const etag = headers.etag;
  if (etag?.startsWith('"')) headers.etag = `W/${etag}`;
  return headers;
}

/** The request headers a compression candidate's answer depends on: a cache must keep one answer per value of each. */
const VARY_ON = ['Accept-Encoding', 'Sec-Fetch-Site'];

/**
 * `Vary: Accept-Encoding, Sec-Fetch-Site` added to an answer that could have been compressed, whether it
 * was or not: a cache (the browser's own among them) must not hand a compressed answer kept for a
 * same-origin request to a cross-site one, nor an uncompressed one to a client that asked otherwise.
 */
export function varyOnCompression(headers: IncomingHttpHeaders): void {
  const vary = headers.vary;
  if (vary?.trim() === '*') return;
  const named = new Set((vary ?? '').split(',').map((name) => name.trim().toLowerCase()));
  const missing = VARY_ON.filter((name) => !named.has(name.toLowerCase()));
  if (missing.length > 0) headers.vary = vary ? `${vary}, ${missing.join(', ')}` : missing.join(', ');
}

function brotliParams(windowBits: number, length: number | undefined) {
  return {
    [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
    [constants.BROTLI_PARAM_LGWIN]: windowBits,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    ...(length !== undefined ? { [constants.BROTLI_PARAM_SIZE_HINT]: length } : {}),
  };
}

/** A compressor for an answer streamed as it comes (`length`: the uncompressed length, when the app gave it). */
export function compressor(encoding: Encoding, length: number | undefined): BrotliCompress | Gzip {
  if (encoding === 'gzip') return createGzip({ level: GZIP_LEVEL });
  return createBrotliCompress({ params: brotliParams(STREAM_WINDOW_BITS, length) });
}

/**
 * Gathers an answer of known length (at most WHOLE_LIMIT), compresses it in one call and sends it with
 * its compressed length; the status and headers are written then, so an upstream failure midway can
 * still be answered with an error page. An answer that compression would not make smaller is sent as it
 * came. More bytes than the app announced fail the answer.
 */
export class WholeAnswer extends Writable {
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(
    private readonly response: ServerResponse,
    private readonly statusCode: number,
    private readonly headers: IncomingHttpHeaders,
    private readonly encoding: Encoding,
    private readonly length: number,
  ) {
    super();
    // A client that goes away stops the gathering, and undici then stops reading the upstream.
    response.once('close', () => {
      if (!this.writableFinished) this.destroy();
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.received += chunk.length;
    if (this.received > this.length) return callback(new Error('the upstream sent more than its Content-Length'));
    this.chunks.push(chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received);
    const compressed =
      this.encoding === 'gzip' ? gzipSync(body, { level: GZIP_LEVEL }) : brotliCompressSync(body, { params: brotliParams(WHOLE_WINDOW_BITS, body.length) });
    if (compressed.length < body.length) {
      this.response.writeHead(this.statusCode, compressedHeaders(this.headers, this.encoding, compressed.length));
      this.response.end(compressed);
    } else {
      varyOnCompression(this.headers);
      this.response.writeHead(this.statusCode, this.headers);
      this.response.end(body);
    }
    callback();
  }
}
