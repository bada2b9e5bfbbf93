import cluster, { type Worker } from 'node:cluster';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AskFailed, channelToWorkers, type WorkersChannel } from '../../src/cluster/channel.js';
import { echo, fromPrimary, said } from './channelPeer.js';

/**
 * The node's channel (cluster/channel.ts) between real processes: this test process is the primary of
 * real node:cluster workers (channelPeer.ts), over their real IPC pipes; the worker's end also runs in a
 * plain forked child, as channelToPrimary sees only its process.
 */
const PEER = fileURLToPath(new URL('./channelPeer.ts', import.meta.url));
const TSX = ['--import', 'tsx'];

const warnings: Array<{ details: object; message: string }> = [];
const log = { warn: (details: object, message: string) => void warnings.push({ details, message }) };

/** The test's own messages from a worker, outside the channel (the `test` key is not ours). */
function next(worker: Worker, kind: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const listener = (message: Record<string, unknown>) => {
      if (message?.test !== kind) return;
      worker.off('message', listener);
      resolve(message);
    };
    worker.on('message', listener);
  });
}

async function startWorker(): Promise<Worker> {
  const worker = cluster.fork();
  await next(worker, 'up');
  return worker;
}

let channel: WorkersChannel;
let a: Worker;
let b: Worker;

beforeAll(async () => {
  cluster.setupPrimary({ exec: PEER, execArgv: TSX, silent: true });
  channel = channelToWorkers(cluster, log);
  channel.answer(fromPrimary, ({ value }) => ({ doubled: value * 2 }));
  [a, b] = await Promise.all([startWorker(), startWorker()]);
}, 60_000);

afterAll(() => {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
});

afterEach(() => {
  warnings.length = 0;
});

describe('asking a worker', () => {
  it('matches concurrent asks to their own answers, whatever order they come back in', async () => {
    const asks = [40, 0, 25, 5, 15].map((delayMs, value) => channel.ask(a, echo, { value, delayMs }, { deadline: 5_000 }));
    const onB = channel.ask(b, echo, { value: 99, delayMs: 0 }, { deadline: 5_000 });
    expect(await Promise.all(asks)).toEqual([0, 1, 2, 3, 4].map((value) => ({ value })));
    expect(await onB).toEqual({ value: 99 });
  });

  it('rejects on the deadline, and ignores the answer that comes after it', async () => {
    const late = channel.ask(a, echo, { value: 1, delayMs: 300 }, { deadline: 50 });
    await expect(late).rejects.toMatchObject({ reason: 'deadline' });
    // The late answer arrives meanwhile and is dropped: the next ask gets its own answer, nothing is logged.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await channel.ask(a, echo, { value: 2, delayMs: 0 }, { deadline: 5_000 })).toEqual({ value: 2 });
    expect(warnings).toEqual([]);
  });

  it('rejects what was asked of a worker that exits, and only that', async () => {
    const doomed = await startWorker();
    const pending = channel.ask(doomed, echo, { value: 1, delayMs: 10_000 }, { deadline: 20_000 });
    const other = channel.ask(a, echo, { value: 3, delayMs: 200 }, { deadline: 5_000 });
    doomed.process.kill('SIGKILL');
    const error = await pending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AskFailed);
    expect((error as AskFailed).reason).toBe('gone');
    expect(await other).toEqual({ value: 3 });
  });

  it('notifies every worker but the one left out', async () => {
    const heard = [next(a, 'heard')];
    const notHeard = next(b, 'heard').then(() => 'heard');
    channel.notifyAll(said, { text: 'hello' }, b);
    expect((await Promise.all(heard))[0]).toMatchObject({ text: 'hello' });
    expect(await Promise.race([notHeard, new Promise((resolve) => setTimeout(() => resolve('silent'), 300))])).toBe('silent');
  });
});

describe('what a worker sends', () => {
  it('gets the primary’s answer to its own ask', async () => {
    const answered = next(a, 'asked');
    a.send({ test: 'ask', value: 21, deadline: 5_000 });
    expect(await answered).toMatchObject({ answer: { doubled: 42 } });
  });

  // Threat: a compromised worker sends messages shaped to look like ours, to make the primary act on
  // garbage or to answer a question asked of another worker.
  it('is dropped and logged when malformed, never acted on', async () => {
    let asked = 0;
    channel.on(said, () => void asked++);
    for (const payload of [
      { gatehouse: { kind: 'notice', topic: 'said', payload: { text: 42 } } },
      { gatehouse: { kind: 'notice', topic: 'said', payload: { text: 'x', extra: true } } },
      { gatehouse: { kind: 'question', id: -1, topic: 'from-primary', payload: { value: 1 } } },
      { gatehouse: { kind: 'whatever' } },
      { gatehouse: 'nonsense' },
    ]) {
      a.send({ test: 'raw', payload });
    }
    await expect.poll(() => warnings.length).toBeGreaterThan(0);
    expect(warnings[0]!.message).toMatch(/^dropped /);
    expect(warnings[0]!.details).toMatchObject({ worker: a.process.pid });
    expect(asked).toBe(0);
  });

  it('cannot answer a question asked of another worker', async () => {
    // b is asked; a forges the answer with every id this channel may have used so far.
    const asked = channel.ask(b, echo, { value: 7, delayMs: 300 }, { deadline: 5_000 });
    for (let id = 0; id < 200; id++) a.send({ test: 'raw', payload: { gatehouse: { kind: 'answer', id, payload: { value: -1 } } } });
    expect(await asked).toEqual({ value: 7 });
  });

  it('is not ours without the envelope, and left alone (prom-client shares the pipe)', async () => {
    a.send({ test: 'raw', payload: { type: 'prom-client:getMetricsReq', requestId: 1 } });
    expect(await channel.ask(a, echo, { value: 5, delayMs: 0 }, { deadline: 5_000 })).toEqual({ value: 5 });
    expect(warnings).toEqual([]);
  });
});

describe('a worker’s end, in a forked child', () => {
  let child: ChildProcess;

  /** A primary of one, written by hand: the test answers as it chooses. */
  function reply(message: object) {
    child.send(message);
  }

  afterEach(() => {
    child?.kill();
  });

  async function spawnPeer(): Promise<void> {
    child = fork(PEER, { execArgv: TSX, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    await new Promise<void>((resolve) => child.on('message', (message: { test?: string }) => message?.test === 'up' && resolve()));
  }

  function nextFromChild(filter: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      const listener = (message: Record<string, unknown>) => {
        if (!filter(message)) return;
        child.off('message', listener);
        resolve(message);
      };
      child.on('message', listener);
    });
  }

  // Threat: the worker is held to the same rules as the primary: a malformed answer from the primary
  // is not trusted either.
  it('drops a malformed answer from the primary and rejects the ask', async () => {
    await spawnPeer();
    const question = nextFromChild((message) => (message?.gatehouse as { kind?: string } | undefined)?.kind === 'question');
    const asked = nextFromChild((message) => message?.test === 'asked');
    child.send({ test: 'ask', value: 1, deadline: 5_000 });
    const { id } = (await question).gatehouse as { id: number };
    reply({ gatehouse: { kind: 'answer', id, payload: { doubled: 'two' } } });
    expect(await asked).toMatchObject({ error: expect.stringMatching(/malformed answer to from-primary/) });
    const logged = nextFromChild((message) => message?.test === 'warnings');
    child.send({ test: 'warnings' });
    expect((await logged).warnings).toEqual([expect.stringMatching(/^dropped a malformed answer to from-primary/)]);
  });

  it('rejects its pending asks when the primary goes away', async () => {
    await spawnPeer();
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.send({ test: 'ask', value: 1, deadline: 20_000 });
    await nextFromChild((message) => (message?.gatehouse as { kind?: string } | undefined)?.kind === 'question');
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    // Unanswered, and the pipe closes: the ask rejects at once (its deadline timer would not keep the child up to tell).
    child.disconnect();
    await exited;
    expect(stdout).toContain('no answer to from-primary: the primary process went away');
  });
});
