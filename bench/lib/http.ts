import { request, type IncomingHttpHeaders } from 'node:http';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One GET to 127.0.0.1 with exactly the given headers (Host included), on a fresh connection. */
export function httpGet(input: { port: number; path: string; headers?: Record<string, string>; timeoutMs?: number }): Promise<Answer> {
  const timeoutMs = input.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port: input.port, path: input.path, method: 'GET', headers: input.headers ?? {}, agent: false, timeout: timeoutMs },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`GET 127.0.0.1:${input.port}${input.path}: no answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}
