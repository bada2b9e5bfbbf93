import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { freePort } from '../../support/ports.js';

export interface Upstream {
  url: string;
  port: number;
  /** Its node:http server: a test may listen to its connections and requests as they arrive. */
  server: Server;
  /** What the last request looked like on arrival. */
  last: { method: string; url: string; headers: IncomingHttpHeaders; bodyLength: number } | undefined;
  /** The headers of the last WebSocket handshake that reached /ws. */
  lastUpgrade: IncomingHttpHeaders | undefined;
  /** How many WebSockets are open on /ws. */
  openWebSockets(): number;
  /** Bytes the upstream's open WebSockets have not been able to write yet (its peer is not reading). */
  webSocketBacklog(): number;
  /** How many WebSocket messages have arrived on /ws so far. */
  webSocketMessages(): number;
  close(): Promise<void>;
}

/**
 * An app to put behind Gatehouse: answers every request with what it received (method, URL, headers,
 * body size) as JSON, sets cookies on /set-cookie (one of them named like Gatehouse's), starts an answer
 * on /stream that never ends, and echoes
 * WebSocket messages on /ws prefixed with the identity it was given.
 */
export async function startUpstream(): Promise<Upstream> {
  const port = await freePort();
  const state: Omit<Upstream, 'server'> = { url: `http://127.0.0.1:${port}`, port, last: undefined, lastUpgrade: undefined, openWebSockets: () => 0, webSocketBacklog: () => 0, webSocketMessages: () => 0, close: async () => {} };
  const server: Server = createServer((request, response) => {
    if (request.url === '/stream') {
      // An answer that never ends (an event stream, say): one chunk, then nothing.
      response.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: first\n\n');
      return;
    }
    let bodyLength = 0;
    request.on('data', (chunk: Buffer) => (bodyLength += chunk.length));
    request.on('end', () => {
      state.last = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, bodyLength };
      const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
      if (request.url === '/set-cookie') headers['set-cookie'] = ['gatehouse_app=planted; Path=/', 'theme=dark; Path=/', '__Host-gatehouse_session=x; Path=/; Secure'];
      response.writeHead(200, headers).end(JSON.stringify(state.last));
    });
  });
  const sockets = new WebSocketServer({ server, path: '/ws' });
  let messages = 0;
  sockets.on('connection', (socket, request) => {
    state.lastUpgrade = request.headers;
    socket.on('message', (data) => {
      messages++;
      // "flood N": N binary messages of 1 MiB, for backpressure tests.
      const flood = /^flood (\d+)$/.exec(data.toString());
      if (flood) for (let i = 0; i < Number(flood[1]); i++) socket.send(Buffer.alloc(1024 * 1024, i % 256));
      else socket.send(`echo from ${request.headers['x-gatehouse-email'] || 'nobody'}: ${data.toString()}`);
    });
  });
  state.openWebSockets = () => sockets.clients.size;
  state.webSocketMessages = () => messages;
  state.webSocketBacklog = () => [...sockets.clients].reduce((sum, client) => sum + client.bufferedAmount, 0);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  state.close = () =>
    new Promise((resolve) => {
      for (const client of sockets.clients) client.terminate();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return Object.assign(state, { server });
}
