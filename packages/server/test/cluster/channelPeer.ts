import { z } from 'zod';
import { channelToPrimary, notice, question } from '../../src/cluster/channel.js';

/**
 * A worker for channel.test.ts, forked with an IPC pipe: it answers `echo` (after the delay asked),
 * `slow` never in time, and reports over the raw pipe what reached its handlers, so that the test can
 * see what was dropped. `raw` makes it send a message the test chose, as a compromised worker would.
 */
export const echo = question('echo', z.strictObject({ value: z.number(), delayMs: z.number() }), z.strictObject({ value: z.number() }));
export const said = notice('said', z.strictObject({ text: z.string() }));
export const fromPrimary = question('from-primary', z.strictObject({ value: z.number() }), z.strictObject({ doubled: z.number() }));

const warnings: string[] = [];
const channel = channelToPrimary({ warn: (_details, message) => void warnings.push(message) });
channel.answer(echo, ({ value, delayMs }) => new Promise((resolve) => setTimeout(() => resolve({ value }), delayMs)));
channel.on(said, ({ text }) => process.send?.({ test: 'heard', text }));

process.on('message', (message: { test?: string; payload?: unknown; value?: number; deadline?: number }) => {
  if (message.test === 'raw') process.send?.(message.payload);
  if (message.test === 'warnings') process.send?.({ test: 'warnings', warnings });
  if (message.test === 'ask') {
    channel.ask(fromPrimary, { value: message.value! }, { deadline: message.deadline! }).then(
      (answer) => process.send?.({ test: 'asked', answer }),
      (error: Error) => {
        // Also on stdout: after the primary went away there is no pipe to tell it on.
        console.log(JSON.stringify({ asked: error.message }));
        if (process.connected) process.send?.({ test: 'asked', error: error.message });
      },
    );
  }
  if (message.test === 'exit') process.exit(0);
});
process.send?.({ test: 'up' });
