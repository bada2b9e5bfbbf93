import { parseDuration } from '@gatehouse/contract';
import type { Config } from '../config/schema.js';
import { ID_TOKEN_KEY_PURPOSES, NEXT_ID_TOKEN_KEY_DELAY, SigningKeys } from '../keys/signingKeys.js';
import { loadSecrets } from '../secrets.js';
import { createTokenCipher } from '../sessions/tokenCipher.js';
import { openDatabase } from '../storage/database.js';
import { announceChange } from '../events/pgChanges.js';

/**
 * `rotate-signing-key`: a new key signs identity assertions at once; the old one stays published a
 * while. The OpenID Provider's ID token keys get their next keys too, published at once and signing
 * from NEXT_ID_TOKEN_KEY_DELAY on, so that apps caching the key set have them first (keys/signingKeys.ts).
 * `--id-token-key-delay` shortens (or lengthens) that wait: an operator who knows how long their apps
 * cache the key set, or who must stop a key that leaked from signing sooner (`0s`: at once).
 */
export async function rotateSigningKey(config: Config, options: { idTokenKeyDelay?: string | undefined } = {}): Promise<number> {
  const delay = options.idTokenKeyDelay === undefined ? NEXT_ID_TOKEN_KEY_DELAY : parseDuration(options.idTokenKeyDelay);
  // Fail closed: a delay that does not parse rotates nothing, rather than the default or at once.
  if (delay === undefined) {
    console.error(`--id-token-key-delay "${options.idTokenKeyDelay}" is not a duration such as 0s, 90s, 15m or 1h.`);
    return 2;
  }
  const database = await openDatabase(config);
  try {
    const cipher = createTokenCipher(loadSecrets(config));
    const keys = new SigningKeys(database.db, cipher);
    await keys.load();
    console.log(`New assertion signing key: ${await keys.rotate()}`);
    for (const purpose of ID_TOKEN_KEY_PURPOSES) {
      const idTokenKeys = new SigningKeys(database.db, cipher, undefined, undefined, purpose);
      await idTokenKeys.load();
      const kid = await idTokenKeys.rotate(delay);
      console.log(`Next ID token key (${purpose}): ${kid}, published now, signing from ${new Date(Date.now() + delay).toISOString()}`);
    }
    // On PostgreSQL the running nodes hear of it at once and sign with the new key; on SQLite (one
    // node, which this process cannot reach) the node picks it up when it restarts.
    if (database.dialect === 'postgres') {
      await announceChange(database.db, { type: 'signing-keys-changed' });
      console.log('The running nodes sign with it from now on.');
    } else console.log('Restart Gatehouse so that it signs with the new key.');
  } finally {
    await database.close();
  }
  return 0;
}
