import type { Kysely } from 'kysely';

/** Apps created in the admin console (apps in gatehouse.yaml stay in the file). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('definition', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('apps').execute();
}
