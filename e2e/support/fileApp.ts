import { createServer, type Server } from 'node:http';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * An upstream that resolves request paths the way real apps and static file servers do (Express's
 * serve-static, most frameworks' routers): the path is percent-decoded once and its dot segments are
 * resolved, then the file is served. "/static,/../secret.txt" is "/secret.txt" to it. It is what makes
 * a public-path bypass visible: the bypass is real only when such an app hands out a private file.
 */
export interface FileApp {
  /** host:port, as a proxy's upstream. */
  address: string;
  stop(): Promise<void>;
}

export const FILES = {
  '/secret.txt': 'TOP SECRET: only for admins',
  '/public/report.txt': 'PRIVATE REPORT: only for admins',
  '/static/app.css': 'body { color: black }',
} as const;

export async function startFileApp(): Promise<FileApp> {
  const root = mkdtempSync(path.join(tmpdir(), 'gatehouse-files-'));
  for (const [file, content] of Object.entries(FILES)) {
    mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  const server: Server = createServer((request, response) => {
    let resolved: string;
    try {
      const pathname = (request.url ?? '/').split('?')[0]!;
      resolved = path.posix.normalize(decodeURIComponent(pathname));
    } catch {
      response.writeHead(400).end();
      return;
    }
    const file = path.join(root, resolved);
    try {
      if (!file.startsWith(root) || !statSync(file).isFile()) throw new Error('not a file');
      response.writeHead(200, { 'content-type': 'text/plain' }).end(readFileSync(file));
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
