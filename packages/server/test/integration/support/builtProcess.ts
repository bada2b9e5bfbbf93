import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built server's entry point, as operators run it (`npm run build` first). */
export const MAIN = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));

/** `main.js start --config <file>` as a real process, with everything it prints kept for the test to read. */
export interface BuiltProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Waits until the output contains `text`; throws with the output when it does not in time or the process ended. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, and the process's exit. */
  stop(): Promise<void>;
}

export function startBuiltProcess(configFile: string): BuiltProcess {
  let output = '';
  const child = spawn(process.execPath, [MAIN, 'start', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    child,
    output: () => output,
    async waitFor(text, timeoutMs = 20_000) {
      for (let waited = 0; !output.includes(text); waited += 100) {
        if (waited > timeoutMs || child.exitCode !== null) throw new Error(`no "${text}" in the output of Gatehouse:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
