import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as they came over the wire, still encoded. */
  body: Buffer;
}

/**
 * One request to 127.0.0.1:`port` with exactly the headers given (Host included; a list is sent as one
 * line each), the answer's bytes
 * left as sent: fetch would decode them and hide what the server chose.
 */
export function rawRequest(port: number, path: string, headers: Record<string, string | string[]>, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

/** The body decoded by its Content-Encoding (brotli, gzip, or none). */
export function decodedBody(answer: RawAnswer): Buffer {
  const encoding = answer.headers['content-encoding'];
  return encoding === 'br' ? brotliDecompressSync(answer.body) : encoding === 'gzip' ? gunzipSync(answer.body) : answer.body;
}
