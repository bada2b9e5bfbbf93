import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Ports for the servers a test starts on 127.0.0.1, chosen so that nothing else takes them before the
 * server binds, which can be seconds later (a Gatehouse is configured with its port before it starts):
 *
 * - **Below the kernel's ephemeral range** (Linux: 32768–60999), from which every outgoing connection
 *   is given its local port: a port freed by an `listen(0)` probe is back in that pool at once, and a
 *   connection to PostgreSQL or the IdP may take it.
 * - **Reserved across processes**: each port taken is a file in one folder for the machine, created
 *   exclusively and naming its process, so two test runs side by side (Vitest's workers, the suite on
 *   two Node.js versions at once, Playwright) never pick the same one. A reservation whose process has
 *   ended is taken over.
 * - **Free right now**: bound once to be sure nothing outside the tests listens there.
 */
const FIRST = 15_000;
const LAST = 32_000;
const folder = path.join(tmpdir(), 'gatehouse-test-ports');
const mine = new Set<number>();

/** A port on 127.0.0.1 that nobody listens on and no other test process will be given. */
export async function freePort(): Promise<number> {
  return freePortBlock([]);
}

/**
 * A port P such that P and P + each offset are free and reserved: for a Gatehouse whose built-in
 * development services sit at fixed offsets from its own port (extends: development-defaults).
 */
export async function freePortBlock(offsets: readonly number[]): Promise<number> {
  mkdirSync(folder, { recursive: true });
  const span = Math.max(0, ...offsets);
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = FIRST + Math.floor(Math.random() * (LAST - FIRST - span));
    const ports = [base, ...offsets.map((offset) => base + offset)];
    const reserved: number[] = [];
    for (const port of ports) {
      if (!reserve(port)) break;
      reserved.push(port);
    }
    if (reserved.length === ports.length && (await Promise.all(ports.map(isFree))).every(Boolean)) return base;
    for (const port of reserved) release(port);
  }
  throw new Error(`no free block of ports between ${FIRST} and ${LAST}`);
}

function reserve(port: number): boolean {
  if (mine.has(port)) return false;
  const file = path.join(folder, String(port));
  for (let tries = 0; tries < 2; tries++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      mine.add(port);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || ownerAlive(file)) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

function release(port: number): void {
  mine.delete(port);
  rmSync(path.join(folder, String(port)), { force: true });
}

function ownerAlive(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return true; // gone this instant: taken by nobody we can see, so not ours to take
  }
  if (text === '') return true; // being written this instant by its owner
  const pid = Number(text);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

// The reservations end with the process that made them.
process.once('exit', () => {
  for (const port of mine) rmSync(path.join(folder, String(port)), { force: true });
});
