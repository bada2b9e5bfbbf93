import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** The worker processes of a node's primary (its children running main.js). */
export function workersOf(primary: number): number[] {
  const children = execFileSync('pgrep', ['-P', String(primary)]).toString().trim().split('\n').map(Number);
  return children.filter((pid) => execFileSync('ps', ['-o', 'args=', '-p', String(pid)]).toString().includes('main.js'));
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One keep-alive connection to the node, and the worker that holds it: read from /proc (the server's end
 * of the connection is the socket whose peer port is this connection's local port; the worker is the
 * process that has it open). Every request on it is answered by that worker.
 */
export interface Pinned {
  worker: number;
  /** A request without a body: its status. */
  request(method: string, path: string, headers?: Record<string, string>): Promise<number>;
  /** A request, with a body when given: its whole answer. */
  send(method: string, path: string, options?: { headers?: Record<string, string>; body?: string }): Promise<Answer>;
  close(): void;
}

export async function pinnedConnection(port: number, workers: number[]): Promise<Pinned> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let localPort = 0;
  const send: Pinned['send'] = (method, path, { headers = {}, body } = {}) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(`http://127.0.0.1:${port}${path}`, { agent, method, headers: { host: `localhost:${port}`, ...headers } }, (res) => {
        localPort = res.socket.localPort ?? 0;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${path} in 10 s`)));
      req.end(body);
    });
  const request: Pinned['request'] = async (method, path, headers) => (await send(method, path, { headers })).status;
  await request('GET', '/healthz');
  const hex = (value: number) => value.toString(16).toUpperCase().padStart(4, '0');
  const inode = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((fields) => fields[1]?.endsWith(`:${hex(port)}`) && fields[2]?.endsWith(`:${hex(localPort)}`))?.[9];
  const worker = workers.find((pid) =>
    readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
      } catch {
        return false;
      }
    }),
  );
  if (!inode || !worker) throw new Error(`no worker holds the connection from port ${localPort}`);
  return { worker, request, send, close: () => agent.destroy() };
}

/** A connection held by each worker of the node whose primary is `primary` (new connections until every worker holds one). */
export async function connectionPerWorker(port: number, primary: number): Promise<Pinned[]> {
  const workers = workersOf(primary);
  const held = new Map<number, Pinned>();
  for (let tries = 0; held.size < workers.length && tries < 20; tries++) {
    const pinned = await pinnedConnection(port, workers);
    if (held.has(pinned.worker)) pinned.close();
    else held.set(pinned.worker, pinned);
  }
  if (held.size < workers.length) {
    for (const pinned of held.values()) pinned.close();
    throw new Error(`${workers.length} workers, but connections reached only ${held.size} of them`);
  }
  return [...held.values()];
}
