import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';

export interface RedisServer {
  url: string;
  port: number;
  /** Stops the server (its data goes with it: nothing is saved). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open, nothing is answered, as with a hung server. */
  pause(): void;
  /** Lets a paused server go on. */
  resume(): void;
  /** Stops it for good and removes its folder. */
  close(): Promise<void>;
}

/**
 * A throwaway Debian `redis-server` on a free loopback port: no persistence, its own empty folder,
 * stopped by close() (and killed if the test process exits first), so nothing is left running.
 */
export async function startRedis({ password }: { password?: string } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-redis-'));
  let child: ChildProcess | undefined;
  const kill = () => child?.kill('SIGKILL');
  process.once('exit', kill);

  const stop = () =>
    new Promise<void>((resolve) => {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return resolve();
      running.once('exit', () => resolve());
      running.kill('SIGCONT');
      running.kill('SIGTERM');
    });

  const start = async () => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning', ...(password ? ['--requirepass', password] : [])],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child = started;
    const failed = new Promise<never>((_, reject) => {
      started.once('error', (error) => reject(new Error(`redis-server could not be started (${error.message}): install Debian's redis-server`)));
      started.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before accepting connections`)));
    });
    failed.catch(() => undefined);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (await Promise.race([answersPing(port), failed])) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await stop();
    throw new Error(`redis-server did not start on port ${port}`);
  };

  await start();
  return {
    url: `redis://${password ? `:${encodeURIComponent(password)}@` : ''}127.0.0.1:${port}`,
    port,
    stop,
    start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    async close() {
      await stop();
      process.off('exit', kill);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis server on the port answers PING (inline command): "+PONG", or "-NOAUTH" with a password. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'));
    });
  });
}
