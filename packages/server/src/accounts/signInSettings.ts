import { formatIssues, emailDomainSchema } from '@gatehouse/contract';
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { Db } from '../storage/database.js';
import { OPEN_ORGANIZATION, type OrganizationRules } from './admission.js';

const KEY = 'sign-in';

/** The organisation-wide sign-in rules as the console edits them (PUT /api/admin/sign-in-settings). */
export const signInSettingsSchema = z
  .object({
    /** Email domains everyone must have, whatever the provider; empty means any domain. */
    allowedDomains: z.array(emailDomainSchema).max(200).default([]),
    /** Whether people unknown to Gatehouse get a user on first sign-in (where their provider allows it too). */
    createUsers: z.boolean().default(true),
  })
  .strict();

export type SignInSettings = z.output<typeof signInSettingsSchema>;

/**
 * "Who may sign in" for the whole organisation, kept in the database and read at every sign-in (one
 * small query; a change counts from the next sign-in on, on every node). Until an admin sets them they
 * admit whatever each provider admits.
 */
export class SignInSettingsStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async get(): Promise<OrganizationRules & SignInSettings> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', KEY).executeTakeFirst();
    if (!row) return { ...OPEN_ORGANIZATION, allowedDomains: [] };
    const parsed = signInSettingsSchema.safeParse(JSON.parse(row.value));
    // Written only through `update`, so this cannot happen short of editing the database by hand; if it
    // does, sign-in stops (fail closed) with the reason in the log rather than admitting anyone.
    if (!parsed.success) throw new Error(`the stored sign-in settings are invalid: ${formatIssues(parsed.error.issues).join('; ')}`);
    return parsed.data;
  }

  /** The settings as they would be stored (domains lower-cased, once each), or `bad_request` naming each bad field. */
  validate(input: unknown): SignInSettings {
    const parsed = signInSettingsSchema.safeParse(input);
    if (!parsed.success) throw new AppError('bad_request', { params: { reason: formatIssues(parsed.error.issues).join('; ') } });
    return { ...parsed.data, allowedDomains: [...new Set(parsed.data.allowedDomains)] };
  }

  /** Validates and stores new settings; returns them with what they replaced. */
  async update(input: unknown): Promise<{ before: SignInSettings; after: SignInSettings }> {
    const after = this.validate(input);
    const before = await this.get();
    const value = JSON.stringify(after);
    await this.db
      .insertInto('settings')
      .values({ key: KEY, value, updated_at: this.now() })
      .onConflict((conflict) => conflict.column('key').doUpdateSet({ value, updated_at: this.now() }))
      .execute();
    return { before, after };
  }
}
