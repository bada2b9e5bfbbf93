import type { Config } from '../config/schema.js';
import { copyDatabase, CopyRefusedError, describeLocation, parseDatabaseLocation, type CopySummary, type DatabaseLocation } from '../storage/copyDatabase.js';
import { USAGE } from './usage.js';

/** `copy-database --from … --to …`: every table of one Gatehouse database copied into a new, empty one. */
export async function copyDatabaseCommand(config: Config, args: { from: string | undefined; to: string | undefined }): Promise<number> {
  let from: DatabaseLocation, to: DatabaseLocation;
  try {
    if (args.from === undefined || args.to === undefined) throw new CopyRefusedError('copy-database needs --from and --to');
    [from, to] = [parseDatabaseLocation(args.from, '--from'), parseDatabaseLocation(args.to, '--to')];
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  let summary: CopySummary;
  try {
    summary = await copyDatabase({ from, to, config });
  } catch (error) {
    console.error(`copy-database: ${error instanceof Error ? error.message : String(error)}`);
    if (error instanceof CopyRefusedError) return 2;
    // The copy is one transaction on the target: it was rolled back.
    console.error(`No rows were written to ${describeLocation(to)}.`);
    return 1;
  }
  const width = Math.max(...summary.tables.map(({ table }) => table.length));
  const total = summary.tables.reduce((sum, { rows }) => sum + rows, 0);
  console.log(`Copied ${describeLocation(from)} to ${describeLocation(to)}${summary.migrated.length > 0 ? ` (schema created: ${summary.migrated.length} migrations)` : ''}:`);
  for (const { table, rows } of summary.tables) console.log(`  ${table.padEnd(width)}  ${rows}`);
  console.log(`  ${'total'.padEnd(width)}  ${total}`);
  console.log(
    '\nEvery node on the new database needs the same secrets.cookieKey and secrets.encryptionKeys as the\n' +
      'install copied from, and the same publicUrl: the IdP tokens of sessions, the client secrets of console\n' +
      'providers and the assertion signing keys were copied encrypted with those keys.' +
      (config.mode === 'development' && !config.secrets.encryptionKeys ? ` A development install keeps them in dev-secrets.json in ${config.dataDir}.` : ''),
  );
  return 0;
}
