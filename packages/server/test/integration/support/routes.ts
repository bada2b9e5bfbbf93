import type { FastifyInstance } from 'fastify';

export interface RegisteredRoute {
  path: string;
  methods: string[];
}

/**
 * Every route registered on a Fastify instance, with full paths, read from `printRoutes` (the only
 * public listing after start): each line of its tree is a segment under its parent, indented four
 * characters per level. A suite that walks this list covers the routes added after it was written.
 */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  const stack: string[] = [];
  const routes: RegisteredRoute[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^(.*?)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    if (match[3]) routes.push({ path: stack.join('').replace(/^\/\//, '/'), methods: match[3].split(', ') });
  }
  return routes;
}
