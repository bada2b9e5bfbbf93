import { randomUUID } from 'node:crypto';
import { AppError } from '../errors.js';
import type { Db } from '../storage/database.js';
import { inCodePointOrder, serializeOn } from '../storage/dialect.js';
import type { Identity, User } from '../storage/schema.js';
import type { OrganizationRules } from './admission.js';
import type { AdmissionFacts, IdentityProfile } from './identityProfile.js';
import { decideLink, decideSignIn, judgeSignIn, type SignInFacts, type SignInRefusal, type SignInVerdict } from './signInRules.js';

export interface IdentityClaims {
  name?: string | undefined;
  picture?: string | undefined;
  groups: string[];
  /** Scalar claims for claim = value policies. */
  extra?: Record<string, unknown>;
  /** What the provider's kind's admission rules read, as the IdP last said it (accounts/admission.ts). */
  facts?: AdmissionFacts | undefined;
}

/** The provider as the sign-in rules read it, with its id. */
export type SignInProvider = SignInFacts['provider'] & { id: string };

/** What a claims re-check found: the IdP's answer admitted and kept, or the rule that refuses it (nothing kept). */
export type RecheckOutcome = { kind: 'admitted'; account: SignedInAccount } | SignInRefusal;

export interface SignedInAccount {
  user: User;
  identity: Identity;
}

/** A sign-in decision as the console's test shows it, with the user it would sign into. */
export type SignInPreview =
  | (Extract<SignInVerdict, { kind: 'existing' | 'link' }> & { user: { id: string; email: string; name: string } | undefined })
  | Exclude<SignInVerdict, { kind: 'existing' | 'link' }>;

/** Users and their linked identities. */
export class AccountStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  getUser(id: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  getIdentity(id: string): Promise<Identity | undefined> {
    return this.db.selectFrom('identities').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findIdentity(providerId: string, subject: string): Promise<Identity | undefined> {
    return this.db
      .selectFrom('identities')
      .selectAll()
      .where('provider_id', '=', providerId)
      .where('subject', '=', subject)
      .executeTakeFirst();
  }

  /**
   * Applies the sign-in rules and records the outcome: the identity is created or refreshed, and the
   * user's own email and name follow only the identity that created the user.
   */
  async signIn(provider: SignInProvider, profile: IdentityProfile, organization: OrganizationRules): Promise<SignedInAccount> {
    return this.db.transaction().execute(async (trx) => {
      // Two first sign-ins at once (two nodes, two tabs) with this identity or this email take turns:
      // the second sees the user the first created and is linked or refused by the rules, never a twin.
      await serializeOn(trx, signInKeys(provider.id, profile));
      const store = new AccountStore(trx, this.now);
      const { existing, linkedUser, usersWithEmail } = await store.signInFacts(provider.id, profile);
      const decision = decideSignIn({ provider, organization, profile, linkedUser, usersWithEmail });
      const now = this.now();
      switch (decision.kind) {
        case 'existing':
          return store.refresh(existing!, linkedUser!, profile, now);
        case 'link': {
          const identity = await store.insertIdentity(decision.userId, provider.id, profile, now);
          const user = (await store.getUser(decision.userId))!;
          return store.refresh(identity, user, profile, now);
        }
        case 'create': {
          const userId = randomUUID();
          await trx
            .insertInto('users')
            .values({
              id: userId,
              email: profile.email!,
              name: profile.name ?? profile.email!,
              picture: profile.picture ?? null,
              status: 'active',
              roles: '[]',
              primary_identity_id: null,
              created_at: now,
              updated_at: now,
              last_sign_in_at: now,
            })
            .execute();
          const identity = await store.insertIdentity(userId, provider.id, profile, now);
          await trx.updateTable('users').set({ primary_identity_id: identity.id }).where('id', '=', userId).execute();
          return { user: (await store.getUser(userId))!, identity };
        }
      }
    });
  }

  /**
   * What signing in would do for this profile, changing nothing: the admin console's test sign-in.
   * The same facts and the same rules as `signIn`, read outside a transaction since nothing is written.
   */
  async previewSignIn(provider: SignInProvider, profile: IdentityProfile, organization: OrganizationRules): Promise<SignInPreview> {
    const { linkedUser, usersWithEmail } = await this.signInFacts(provider.id, profile);
    const verdict = judgeSignIn({ provider, organization, profile, linkedUser, usersWithEmail });
    if (verdict.kind === 'existing' || verdict.kind === 'link') {
      const user = await this.getUser(verdict.userId);
      return { ...verdict, user: user ? { id: user.id, email: user.email, name: user.name } : undefined };
    }
    return verdict;
  }

  /** Links a provider's identity to a signed-in user (see decideLink); returns the identity. */
  async link(userId: string, provider: SignInProvider, profile: IdentityProfile, organization: OrganizationRules): Promise<SignedInAccount> {
    return this.db.transaction().execute(async (trx) => {
      await serializeOn(trx, signInKeys(provider.id, profile));
      const store = new AccountStore(trx, this.now);
      const existing = await store.findIdentity(provider.id, profile.subject);
      const decision = decideLink({ provider, organization, profile, userId, owner: existing ? { id: existing.user_id } : undefined });
      const user = await store.getUser(userId);
      if (!user) throw new Error(`user ${userId} vanished during linking`);
      const now = this.now();
      const identity = decision.kind === 'link' ? await store.insertIdentity(userId, provider.id, profile, now) : existing!;
      return store.refresh(identity, user, profile, now);
    });
  }

  /**
   * A claims re-check of a live session's identity: what the IdP says now is judged exactly as a fresh
   * sign-in with it would be (signInRules.ts, with this identity's user as its owner), and kept — the
   * identity's claims, and for the primary identity the user's email, name and picture — only when that
   * sign-in would be admitted as the same user. Otherwise nothing is written and the refusal is
   * returned: the caller ends the session. A fact this answer did not carry (a refresh without an ID
   * token) is the one kept from before. One transaction, serialised with sign-ins on the identity and
   * on the email, so that two users never end up with one address.
   */
  async recheck(identity: Identity, provider: SignInProvider, profile: IdentityProfile, organization: OrganizationRules): Promise<RecheckOutcome> {
    return this.db.transaction().execute(async (trx) => {
      await serializeOn(trx, signInKeys(provider.id, profile));
      const store = new AccountStore(trx, this.now);
      const current = await store.getIdentity(identity.id);
      const user = current ? await store.getUser(current.user_id) : undefined;
      if (!current || !user) {
        return { kind: 'refused', reason: 'identity_taken', code: 'identity_conflict', why: 'the identity was unlinked or its user removed', params: { provider: provider.name } } satisfies SignInRefusal;
      }
      const kept = { ...profile, facts: { ...identityClaims(current).facts, ...definedFacts(profile.facts) } };
      const usersWithEmail = kept.email ? await store.usersWithEmail(kept.email) : [];
      const linkedUser = { id: user.id, status: user.status, primary: user.primary_identity_id === current.id };
      const verdict = judgeSignIn({ provider, organization, profile: kept, linkedUser, usersWithEmail });
      if (verdict.kind === 'refused') return verdict;
      return { kind: 'admitted', account: await store.refresh(current, user, kept, this.now(), { signIn: false }) };
    });
  }

  listIdentities(userId: string): Promise<Identity[]> {
    return this.db.selectFrom('identities').selectAll().where('user_id', '=', userId).orderBy('linked_at').orderBy(inCodePointOrder(this.db, 'id')).execute();
  }

  /**
   * Removes one of the user's identities, never the last: someone must still be able to sign in.
   * Returns the identity removed, or undefined when the user has no such identity.
   */
  async unlink(userId: string, identityId: string): Promise<Identity | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // Two unlinks of the user's last two identities at once: the second sees one left and refuses.
      await serializeOn(trx, [`user/${userId}`]);
      const identities = await trx.selectFrom('identities').selectAll().where('user_id', '=', userId).execute();
      const identity = identities.find((candidate) => candidate.id === identityId);
      if (!identity) return undefined;
      if (identities.length === 1) throw new AppError('last_identity');
      await trx.deleteFrom('identities').where('id', '=', identityId).execute();
      // The user's email and name stay as they are; no other identity takes over as their source.
      await trx
        .updateTable('users')
        .set({ primary_identity_id: null, updated_at: this.now() })
        .where('id', '=', userId)
        .where('primary_identity_id', '=', identityId)
        .execute();
      return identity;
    });
  }

  /** How many identities are linked to each provider (the console's provider list; a provider in use is not deleted). */
  async identityCounts(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('identities')
      .select(['provider_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy('provider_id')
      .execute();
    return new Map(rows.map((row) => [row.provider_id, Number(row.n)]));
  }

  /** Suspends or reactivates a user (the caller ends their sessions). */
  async setStatus(userId: string, status: 'active' | 'suspended'): Promise<void> {
    await this.db.updateTable('users').set({ status, updated_at: Date.now() }).where('id', '=', userId).execute();
  }

  /** Replaces a user's roles (stored as a JSON list). */
  async setRoles(userId: string, roles: readonly string[]): Promise<void> {
    await this.db.updateTable('users').set({ roles: JSON.stringify(roles), updated_at: Date.now() }).where('id', '=', userId).execute();
  }

  /** How many users there are (the dashboard). */
  async countUsers(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The emails of these users, by id (audit events name people by email); unknown ids are left out. */
  async emailsOf(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const people = await this.db.selectFrom('users').select(['id', 'email']).where('id', 'in', [...ids]).execute();
    return new Map(people.map((person) => [person.id, person.email]));
  }

  /** What the sign-in rules need to know about this (provider, subject) and its email. */
  private async signInFacts(providerId: string, profile: IdentityProfile) {
    const existing = await this.findIdentity(providerId, profile.subject);
    const owner = existing ? await this.getUser(existing.user_id) : undefined;
    const linkedUser = owner ? { ...owner, primary: owner.primary_identity_id === existing!.id } : undefined;
    const usersWithEmail = profile.email ? await this.usersWithEmail(profile.email) : [];
    return { existing, linkedUser, usersWithEmail };
  }

  /** Users whose primary email this is (two at most: enough to tell one from several). */
  private usersWithEmail(email: string): Promise<Array<{ id: string; status: 'active' | 'suspended' }>> {
    return this.db.selectFrom('users').select(['id', 'status']).where('email', '=', email).limit(2).execute();
  }

  private async insertIdentity(userId: string, providerId: string, profile: IdentityProfile, now: number): Promise<Identity> {
    const identity: Identity = {
      id: randomUUID(),
      user_id: userId,
      provider_id: providerId,
      subject: profile.subject,
      email: profile.email ?? null,
      email_verified: profile.emailVerified ? 1 : 0,
      claims: JSON.stringify(snapshot(profile)),
      linked_at: now,
      last_used_at: now,
    };
    await this.db.insertInto('identities').values(identity).execute();
    return identity;
  }

  private async refresh(
    identity: Identity,
    user: User,
    profile: IdentityProfile,
    now: number,
    { signIn = true }: { signIn?: boolean } = {},
  ): Promise<SignedInAccount> {
    const identityUpdate = {
      email: profile.email ?? null,
      email_verified: profile.emailVerified ? 1 : 0,
      claims: JSON.stringify(snapshot(profile)),
      ...(signIn ? { last_used_at: now } : {}),
    };
    await this.db.updateTable('identities').set(identityUpdate).where('id', '=', identity.id).execute();
    const isPrimary = user.primary_identity_id === identity.id;
    const userUpdate = {
      ...(signIn ? { last_sign_in_at: now } : {}),
      updated_at: now,
      ...(isPrimary && profile.email ? { email: profile.email } : {}),
      ...(isPrimary && profile.name ? { name: profile.name } : {}),
      ...(isPrimary ? { picture: profile.picture ?? null } : {}),
    };
    await this.db.updateTable('users').set(userUpdate).where('id', '=', user.id).execute();
    return { user: { ...user, ...userUpdate }, identity: { ...identity, ...identityUpdate } };
  }
}

/** What a sign-in or link decides on: this provider's subject, and the email it asserts. */
function signInKeys(providerId: string, profile: IdentityProfile): string[] {
  return [`identity/${providerId}/${profile.subject}`, ...(profile.email ? [`email/${profile.email}`] : [])];
}

function snapshot(profile: IdentityProfile): IdentityClaims {
  return { name: profile.name, picture: profile.picture, groups: profile.groups, extra: profile.extra, ...(profile.facts ? { facts: profile.facts } : {}) };
}

/**
 * The admission facts of an identity kept before they were kept apart (IdentityClaims.facts): read from
 * what its snapshot holds of the same answer, so that the rules judge an older session by what its IdP
 * said rather than end it for knowing nothing. Google's `hd` and Entra's `tid` were kept among the
 * extra claims (a Google answer without `hd` is a personal account); GitHub's organisations are its
 * groups without a team. Each is read only by its own kind's rule (accounts/admission.ts).
 */
function factsOfOlderSnapshot(groups: readonly string[], extra: Record<string, unknown>): AdmissionFacts {
  return {
    hostedDomain: typeof extra.hd === 'string' ? extra.hd.toLowerCase() : null,
    ...(typeof extra.tid === 'string' ? { tenant: extra.tid.toLowerCase() } : {}),
    organizations: groups.filter((group) => !group.includes('/')),
  };
}

/** The facts an answer carried (a fact it left out is undefined, and keeps the one from before). */
function definedFacts(facts: AdmissionFacts | undefined): AdmissionFacts {
  return Object.fromEntries(Object.entries(facts ?? {}).filter(([, value]) => value !== undefined));
}

export function identityClaims(identity: Pick<Identity, 'claims'>): IdentityClaims {
  try {
    const parsed = JSON.parse(identity.claims) as Partial<IdentityClaims>;
    const groups = Array.isArray(parsed.groups) ? parsed.groups.filter((g) => typeof g === 'string') : [];
    const extra = parsed.extra && typeof parsed.extra === 'object' && !Array.isArray(parsed.extra) ? parsed.extra : {};
    return {
      ...parsed,
      groups,
      extra,
      facts: parsed.facts && typeof parsed.facts === 'object' && !Array.isArray(parsed.facts) ? parsed.facts : factsOfOlderSnapshot(groups, extra),
    };
  } catch {
    // A snapshot that does not parse grants nothing.
    return { groups: [] };
  }
}
