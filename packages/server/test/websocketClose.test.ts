import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { closeWithin } from '../src/proxy/websocket.js';

/** Closing a bridged WebSocket: the handshake when the peer answers, a cut when it does not. */
describe('closeWithin', () => {
  let server: WebSocketServer | undefined;
  afterEach(() => server?.close());

  async function pair(): Promise<{ near: WebSocket; far: WebSocket }> {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[WebSocket]>;
    const far = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await once(far, 'open');
    const [near] = await accepted;
    return { near, far };
  }

  it('closes with the code and reason given when the peer answers', async () => {
    const { near, far } = await pair();
    const heard = once(far, 'close') as Promise<[number, Buffer]>;
    const closed = once(near, 'close') as Promise<[number, Buffer]>;
    closeWithin(near, 1008, 'session ended', 200);
    const [code, reason] = await heard;
    expect([code, reason.toString()]).toEqual([1008, 'session ended']);
    // The peer's answer completed the handshake: no cut (1006).
    expect((await closed)[0]).toBe(1008);
  });

  it('cuts the connection of a peer that does not answer, instead of waiting for ws’s 30 s', async () => {
    const { near, far } = await pair();
    // Not reading: the closing handshake never reaches it.
    far.pause();
    const closed = once(near, 'close') as Promise<[number, Buffer]>;
    closeWithin(near, 1008, 'session ended', 200);
    // Within this test's 5 s limit; 1006: closed without a closing frame from the peer.
    expect((await closed)[0]).toBe(1006);
    far.terminate();
  });
});
