import { createRequire } from 'node:module';
import type { AdapterConstructor, AdapterFactory } from 'oidc-provider';

const require = createRequire(import.meta.url);
// Its entry point does not export it, and it has no types of its own: loaded by path.
const path = require.resolve('oidc-provider').replace(/lib[\\/]index\.js$/, 'lib/adapters/memory_adapter.js');
const { default: MemoryAdapter } = (await import(path)) as { default: AdapterConstructor };

/**
 * oidc-provider's own in-memory adapter (one store in the process, shared by every provider), for tests
 * of the OpenID Provider until the database adapter (provide/adapter.ts) takes its place; never in the server.
 */
export function memoryOpAdapter(): AdapterFactory {
  return (name: string) => new MemoryAdapter(name);
}
