import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Debian's nginx, where the package puts it (scripts/test.sh installs it when run as root). */
export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((candidate) => existsSync(candidate));

export interface RunningNginx {
  stop(): Promise<void>;
}

/**
 * nginx in the foreground, its prefix and everything it writes in `dir`, started from `dir/nginx.conf`;
 * resolves once `ready` resolves (a request through it), and fails with nginx's error log when it exits
 * or does not answer within 10 s.
 */
export async function startNginx(dir: string, ready: () => Promise<unknown>): Promise<RunningNginx> {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install nginx; scripts/test.sh does it when run as root)');
  const at = (name: string) => path.join(dir, name);
  const nginx = spawn(NGINX, ['-p', `${dir}/`, '-e', at('error.log'), '-c', at('nginx.conf'), '-g', `daemon off; pid ${at('nginx.pid')};`], { stdio: 'ignore' });
  const stop = async () => {
    if (nginx.exitCode !== null || nginx.signalCode !== null) return;
    const exited = new Promise((resolve) => nginx.once('exit', resolve));
    nginx.kill('SIGTERM');
    await exited;
  };
  for (let waited = 0; ; waited += 50) {
    if (nginx.exitCode !== null || waited > 10_000) {
      await stop();
      throw new Error(`nginx did not start:\n${existsSync(at('error.log')) ? readFileSync(at('error.log'), 'utf8') : ''}`);
    }
    if (await ready().then(() => true, () => false)) return { stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
