import { connect } from 'node:net';
import { PEER_ADDRESS, T, type FuzzRequest } from './model.js';

/** Run-time values the placeholders stand for. */
export interface Bindings {
  port: number;
  wikiCookie: string;
  vaultCookie: string;
  portalCookie: string;
  csrf: string;
  idpIssuer: string;
  bobSub: string;
}

function fill(text: string, b: Bindings, id: string): string {
  if (!text.includes('⟦')) return text;
  return text
    .replaceAll(T.port, String(b.port))
    .replaceAll(T.wikiCookie, b.wikiCookie)
    .replaceAll(T.vaultCookie, b.vaultCookie)
    .replaceAll(T.portalCookie, b.portalCookie)
    .replaceAll(T.csrf, b.csrf)
    .replaceAll(T.fuzzId, id)
    .replaceAll(T.idpIssuer, b.idpIssuer)
    .replaceAll(T.bobSub, b.bobSub);
}

const b64 = (value: string) => Buffer.from(value).toString('base64url');

function logoutToken(request: FuzzRequest, b: Bindings, id: string): string {
  const { value, encoding } = request.logoutToken!;
  let token = value;
  if (value.startsWith('jwt:')) {
    const [header = '', ...rest] = value.slice(4).split('.');
    const signature = rest.pop() ?? '';
    token = `${header}.${b64(fill(rest.join('.'), b, id))}.${signature}`;
  }
  return encoding === 'json' ? JSON.stringify(token).slice(1, -1) : encodeURIComponent(token);
}

/** The bytes written for a request (placeholders filled in; `X-Fuzz-Id` added to tie what the upstream receives to it). */
export function render(request: FuzzRequest, b: Bindings, id: string): Buffer {
  if (request.raw !== undefined) return Buffer.from(fill(request.raw, b, id), 'latin1');
  let body = fill(request.body, b, id);
  if (request.logoutToken) body = body.replace(T.logoutToken, logoutToken(request, b, id));
  const lines = [`${request.method} ${fill(request.target, b, id)} HTTP/1.1`];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value === T.length ? Buffer.byteLength(body) : fill(value, b, id)}`);
  lines.push(`X-Fuzz-Id: ${id}`);
  // Bytes as written: a generator's non-ASCII characters go out as UTF-8, like a client would send them.
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), Buffer.from(body, 'utf8')]);
}

export interface Answer {
  /** 0: the connection closed without an answer; -1: no answer in time. */
  status: number;
  headers: Map<string, string[]>;
  body: string;
  /** Answers after the first on the same connection (a smuggled second request, say). */
  extra: number;
}

const header = (answer: Answer, name: string) => answer.headers.get(name)?.[0];
export { header };

/**
 * Writes the bytes on a fresh connection from the request's peer address and reads one answer,
 * framed by Content-Length or chunked encoding (or the close). `raw` requests half-close after writing,
 * so a parser waiting for more bytes sees the end.
 */
export function exchange(port: number, request: FuzzRequest, bytes: Buffer, timeoutMs = 10_000): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: PEER_ADDRESS[request.peer] });
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (answer: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => finish(parse(data, request.method, true) ?? { status: -1, headers: new Map(), body: '', extra: 0 }), timeoutMs);
    socket.on('connect', () => {
      if (request.raw !== undefined) socket.end(bytes);
      else socket.write(bytes);
    });
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (request.raw === undefined) {
        const answer = parse(data, request.method, false);
        if (answer) finish(answer);
      }
    });
    const closed = () => finish(parse(data, request.method, true) ?? { status: 0, headers: new Map(), body: '', extra: 0 });
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', closed);
  });
}

/** One HTTP/1.1 answer from the start of `data`, or undefined while incomplete (at `eof`, whatever is there). */
export function parse(data: Buffer, method: string, eof: boolean): Answer | undefined {
  let offset = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end === -1) return undefined;
    const head = data.subarray(offset, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
    const headers = new Map<string, string[]>();
    for (const line of head.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200 && status !== 101) {
      offset = bodyStart;
      continue;
    }
    const answer = (body: Buffer, next: number): Answer => ({ status, headers, body: body.toString('utf8'), extra: countAnswers(data.subarray(next)) });
    if (method.toUpperCase() === 'HEAD' || status === 204 || status === 304 || status === 101) return answer(Buffer.alloc(0), bodyStart);
    if ((headers.get('transfer-encoding')?.join(',') ?? '').toLowerCase().includes('chunked')) {
      const chunks: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const lineEnd = data.indexOf('\r\n', at);
        if (lineEnd === -1) return eof ? answer(Buffer.concat(chunks), data.length) : undefined;
        const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
        if (Number.isNaN(size)) return answer(Buffer.concat(chunks), data.length);
        if (size === 0) {
          const trailerEnd = data.indexOf('\r\n\r\n', lineEnd);
          if (trailerEnd === -1 && !eof) return undefined;
          return answer(Buffer.concat(chunks), trailerEnd === -1 ? data.length : trailerEnd + 4);
        }
        if (data.length < lineEnd + 2 + size + 2) return eof ? answer(Buffer.concat(chunks), data.length) : undefined;
        chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    const length = headers.get('content-length')?.[0];
    if (length !== undefined) {
      const n = Number(length);
      if (data.length < bodyStart + n) return eof ? answer(data.subarray(bodyStart), data.length) : undefined;
      return answer(data.subarray(bodyStart, bodyStart + n), bodyStart + n);
    }
    return eof ? answer(data.subarray(bodyStart), data.length) : undefined;
  }
}

function countAnswers(rest: Buffer): number {
  return (rest.toString('latin1').match(/(^|\r\n)HTTP\/1\.[01] \d{3} /g) ?? []).length;
}
