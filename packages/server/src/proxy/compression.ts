import { negotiate } from '@fastify/accept-negotiator';
import compressible from 'compressible';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync, type BrotliCompress, type Gzip } from 'node:zlib';

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
 * The answer's headers once compressed: the encoding named, the length as given (or none, when it is
 * not known yet), `Vary` naming Accept-Encoding (caches must keep both), and a strong ETag made weak,
 * since the bytes differ from those it names (as nginx does).
 */
export function compressedHeaders(headers: IncomingHttpHeaders, encoding: Encoding, length?: number): IncomingHttpHeaders {
  if (length === undefined) delete headers['content-length'];
  else headers['content-length'] = String(length);
  headers['content-encoding'] = encoding;
  varyOnEncoding(headers);
  const etag = headers.etag;
  if (etag?.startsWith('"')) headers.etag = `W/${etag}`;
  return headers;
}

/** `Vary: Accept-Encoding` added to an answer that could have been compressed, whether it was or not. */
function varyOnEncoding(headers: IncomingHttpHeaders): void {
  const vary = headers.vary;
  if (!vary) headers.vary = 'Accept-Encoding';
  else if (vary.trim() !== '*' && !/(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(vary)) headers.vary = `${vary}, Accept-Encoding`;
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
      varyOnEncoding(this.headers);
      this.response.writeHead(this.statusCode, this.headers);
      this.response.end(body);
    }
    callback();
  }
}
