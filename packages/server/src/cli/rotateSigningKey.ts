import type { Config } from '../config/schema.js';
import { SigningKeys } from '../keys/signingKeys.js';
import { loadSecrets } from '../secrets.js';
import { createTokenCipher } from '../sessions/tokenCipher.js';
import { openDatabase } from '../storage/database.js';
import { announceChange } from '../events/pgChanges.js';

/** `rotate-signing-key`: a new key signs identity assertions; the old one stays published a while (keys/signingKeys.ts). */
export async function rotateSigningKey(config: Config): Promise<number> {
  const database = await openDatabase(config);
  try {
    const keys = new SigningKeys(database.db, createTokenCipher(loadSecrets(config)));
    await keys.load();
    console.log(`New assertion signing key: ${await keys.rotate()}`);
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
