import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';

/**
 * `GET /ws` WebSocket echo: what the app receives comes straight back, prefixed by who sent it (from
 * the identity header Gatehouse set on the upgrade request), so a test can see both the bridge and the
 * identity working.
 */
export function echoSocket() {
  const server = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  return function onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer) {
    // Node hands the socket over without an error listener: a client that resets the connection must
    // not become an uncaught error that ends the process.
    socket.on('error', () => socket.destroy());
    if ((request.url ?? '/').split('?')[0] !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const user = request.headers['x-gatehouse-email'];
    server.handleUpgrade(request, socket, head, (client) => {
      client.on('message', (data, isBinary) => {
        client.send(isBinary ? data : `echo from ${typeof user === 'string' && user ? user : 'nobody'}: ${data.toString()}`, { binary: isBinary });
      });
    });
  };
}
