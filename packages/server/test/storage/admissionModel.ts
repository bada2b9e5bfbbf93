import { emailDomainOf } from '@gatehouse/contract';
import type { FastifyBaseLogger } from 'fastify';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AccountStore, identityClaims, type SignInProvider } from '../../src/accounts/accountStore.js';
import type { OrganizationRules } from '../../src/accounts/admission.js';
import type { IdentityProfile } from '../../src/accounts/identityProfile.js';
import { SignInSettingsStore } from '../../src/accounts/signInSettings.js';
import { AuditLog } from '../../src/audit/auditLog.js';
import { ClaimsRefresher } from '../../src/authenticate/claimsRefresher.js';
import type { ProviderRegistry } from '../../src/providers/providerRegistry.js';
import type { VerifiedSignIn } from '../../src/providers/kinds/index.js';
import type { AppRegistry } from '../../src/apps/appRegistry.js';
import { CONSUMER_TENANT } from '@gatehouse/contract';
import { AppError } from '../../src/errors.js';
import { reviewAdmission } from '../../src/sessions/admissionReview.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import type { Opener } from './storeSuite.js';

/**
 * The admission invariant as a model-based property (issue #25): "every live session would be admitted
 * now by a fresh sign-in with what its IdP says now". fast-check runs random sequences of what happens
 * to a deployment — people signing in, IdPs changing what they say of them (a new address, verified or
 * not, another person's, another Workspace, tenant or organisation), operators narrowing or widening a
 * provider's rules (the console, a reload) and the organisation's, and claims re-checks — through the
 * real stores, the real re-check (ClaimsRefresher, AccountStore.recheck) and the real review
 * (sessions/admissionReview.ts), on SQLite and on PostgreSQL. After every step it reads the database
 * and judges it with rules of its own (`admits` below, written apart from accounts/admission.ts):
 *
 * 1. every live session is admitted by the rules in force, with what its IdP last said (the identity's
 *    kept email and facts);
 * 2. a session re-checked since its IdP last changed is admitted with what the IdP says now, and keeps
 *    exactly that;
 * 3. no two users have one email, and a user's email is their primary identity's (never another's).
 */

const T0 = 1_750_000_000_000;
const INTERVAL = 60_000;
const TENANTS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', CONSUMER_TENANT] as const;
const PEOPLE = ['ann', 'bob', 'cat'] as const;
const DOMAINS = ['corp.example', 'partner.example'] as const;
type Person = (typeof PEOPLE)[number];

/** What an IdP says of a person now. */
interface Answer {
  email: string;
  verified: boolean;
  hostedDomain: string | null;
  tenant: string;
  organizations: string[];
}

/** The providers' rules an operator edits. */
interface Rules {
  allowedDomains: string[];
  hostedDomains: string[];
  tenants: string[];
  allowAnyTenant: boolean;
  allowedOrganizations: string[];
}

const KINDS = { corp: 'oidc', partner: 'oidc', google: 'google', entra: 'entra', github: 'github' } as const;
type ProviderId = keyof typeof KINDS;
const PROVIDER_IDS = Object.keys(KINDS) as ProviderId[];

function provider(id: ProviderId, rules: Rules): SignInProvider & { enabled: true; trustGroups: false } {
  const kind = KINDS[id];
  return {
    id,
    name: id,
    kind,
    enabled: true,
    trustGroups: false,
    createUsers: true,
    // The partner provider may link by email: an IdP trusted for addresses links into their owners.
    trustEmail: id === 'partner',
    allowedDomains: rules.allowedDomains,
    ...(kind === 'google' ? { hostedDomains: rules.hostedDomains } : {}),
    ...(kind === 'entra' ? { tenant: 'organizations', tenants: rules.allowAnyTenant ? [] : rules.tenants, allowAnyTenant: rules.allowAnyTenant } : {}),
    ...(kind === 'github' ? { allowedOrganizations: rules.allowedOrganizations } : {}),
  };
}

/** The rules, written apart from the judge: what a fresh sign-in would admit. */
function admits(id: ProviderId, rules: Rules, organization: OrganizationRules, answer: Pick<Answer, 'email' | 'verified'> & Partial<Answer>): boolean {
  if (!answer.email || !answer.verified) return false;
  const domain = emailDomainOf(answer.email);
  if (rules.allowedDomains.length > 0 && !rules.allowedDomains.includes(domain)) return false;
  if (organization.allowedDomains.length > 0 && !organization.allowedDomains.includes(domain)) return false;
  switch (KINDS[id]) {
    case 'google':
      return rules.hostedDomains.length === 0 || (typeof answer.hostedDomain === 'string' && rules.hostedDomains.includes(answer.hostedDomain));
    case 'entra':
      if (!answer.tenant) return false;
      if (rules.allowAnyTenant) return answer.tenant !== CONSUMER_TENANT;
      return rules.tenants.includes(answer.tenant);
    case 'github':
      return rules.allowedOrganizations.length === 0 || rules.allowedOrganizations.some((org) => answer.organizations?.includes(org));
    default:
      return true;
  }
}

function profileOf(id: ProviderId, subject: string, answer: Answer): IdentityProfile {
  const kind = KINDS[id];
  const facts = kind === 'google' ? { hostedDomain: answer.hostedDomain } : kind === 'entra' ? { tenant: answer.tenant } : kind === 'github' ? { organizations: answer.organizations } : undefined;
  return { subject, email: answer.email, emailVerified: answer.verified, name: subject, picture: undefined, groups: [], sid: undefined, extra: {}, ...(facts ? { facts } : {}) };
}

const open: Rules = { allowedDomains: [], hostedDomains: [], tenants: [...TENANTS.slice(0, 2)], allowAnyTenant: false, allowedOrganizations: [] };

interface World {
  handle: DatabaseHandle;
  clock: number;
  rules: Record<ProviderId, Rules>;
  organization: OrganizationRules;
  /** What each IdP says of each person now, and how many times it changed. */
  idp: Map<string, { answer: Answer; version: number }>;
  /** The IdP's version an identity was last confirmed at (sign-in, or a re-check that passed). */
  confirmed: Map<string, number>;
  accounts: AccountStore;
  sessions: SessionStore;
  settings: SignInSettingsStore;
  refresher: ClaimsRefresher;
  review: (scope: Parameters<typeof reviewAdmission>[1]) => Promise<number>;
  log: FastifyBaseLogger;
}

const key = (id: ProviderId, person: Person) => `${id}/${person}`;

async function makeWorld(handle: DatabaseHandle): Promise<World> {
  const world = { handle, clock: T0, rules: {}, organization: { allowedDomains: [], createUsers: true }, idp: new Map(), confirmed: new Map() } as unknown as World;
  for (const id of PROVIDER_IDS) world.rules[id] = { ...open, tenants: [...open.tenants] };
  for (const id of PROVIDER_IDS) {
    for (const person of PEOPLE) {
      world.idp.set(key(id, person), { answer: { email: `${person}@corp.example`, verified: true, hostedDomain: 'corp.example', tenant: TENANTS[0], organizations: ['acme'] }, version: 0 });
    }
  }
  const now = () => world.clock;
  const log = pino({ level: 'silent' });
  const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });
  world.accounts = new AccountStore(handle.db, now);
  world.sessions = new SessionStore(handle.db, cipher, { idleTimeout: 86_400_000, absoluteLifetime: 7 * 86_400_000, touchInterval: 60_000 }, now);
  world.settings = new SignInSettingsStore(handle.db, now);
  const audit = new AuditLog(handle.db, now);
  const registry = {
    get: (id: string) => (id in KINDS ? provider(id as ProviderId, world.rules[id as ProviderId]) : undefined),
    async connection(id: string) {
      return {
        // The IdP answers a refresh with what it says of the person now.
        async refresh(_token: string, identity: { subject: string }): Promise<VerifiedSignIn> {
          const person = identity.subject.split('/')[1] as Person;
          const { answer } = world.idp.get(key(id as ProviderId, person))!;
          return { profile: profileOf(id as ProviderId, identity.subject, answer), idToken: undefined, refreshToken: 'rt', accessToken: { value: 'at', expiresIn: undefined } };
        },
      };
    },
  } as unknown as ProviderRegistry;
  world.refresher = new ClaimsRefresher(
    { providers: registry, sessions: world.sessions, accounts: world.accounts, audit, apps: { passesAccessTokens: false } as AppRegistry, signInSettings: world.settings },
    { interval: INTERVAL, maxAge: 2 * INTERVAL },
    now,
  );
  world.review = (scope) => reviewAdmission({ sessions: world.sessions, audit, providers: registry, organization: () => world.settings.get(), log }, scope, { by: 'console' });
  world.log = log;
  return world;
}

/** Reads the database and judges it by the model's own rules. */
async function checkInvariants(world: World): Promise<void> {
  const live = await world.sessions.liveForAdmission({ limit: 10_000 });
  for (const session of live) {
    const id = session.providerId as ProviderId;
    const claims = identityClaims({ claims: session.claims });
    const kept = { email: session.email ?? '', verified: session.emailVerified === 1, hostedDomain: claims.facts?.hostedDomain ?? undefined, tenant: claims.facts?.tenant ?? '', organizations: claims.facts?.organizations ?? [] } as Answer;
    // 1. What its IdP last said passes the rules in force.
    expect(admits(id, world.rules[id], world.organization, kept), `live session ${session.sessionId} of ${id} with ${JSON.stringify(kept)}`).toBe(true);
    const identity = await world.accounts.getIdentity(session.identityId);
    const person = identity!.subject.split('/')[1] as Person;
    const current = world.idp.get(key(id, person))!;
    // 2. Confirmed since the IdP last changed: admitted with what it says now, and keeping exactly that.
    if (world.confirmed.get(identity!.id) === current.version) {
      expect(admits(id, world.rules[id], world.organization, current.answer)).toBe(true);
      expect(kept.email).toBe(current.answer.email);
    }
  }
  // 3. One email, one user; and a user's email is their primary identity's.
  const users = await world.handle.db.selectFrom('users').select(['id', 'email', 'primary_identity_id']).execute();
  expect(new Set(users.map((user) => user.email)).size).toBe(users.length);
  for (const user of users) {
    if (!user.primary_identity_id) continue;
    const primary = await world.accounts.getIdentity(user.primary_identity_id);
    if (primary?.email) expect(user.email).toBe(primary.email);
  }
}

/* The commands. Each acts through the real code; the model only keeps what the IdPs say and the rules. */

class SignIn implements fc.AsyncCommand<object, World> {
  constructor(
    readonly id: ProviderId,
    readonly person: Person,
  ) {}
  check = () => true;
  async run(_model: object, world: World) {
    const subject = key(this.id, this.person);
    const { answer, version } = world.idp.get(subject)!;
    try {
      const { user, identity } = await world.accounts.signIn(provider(this.id, world.rules[this.id]), profileOf(this.id, subject, answer), await world.settings.get());
      await world.sessions.create({ userId: user.id, identityId: identity.id, providerId: this.id, refreshToken: 'rt' });
      world.confirmed.set(identity.id, version);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Refused: the rules' own business; the invariants say whether it was right to.
    }
    await checkInvariants(world);
  }
  toString = () => `SignIn(${this.id}, ${this.person})`;
}

class IdpSays implements fc.AsyncCommand<object, World> {
  constructor(
    readonly id: ProviderId,
    readonly person: Person,
    readonly answer: Answer,
  ) {}
  check = () => true;
  async run(_model: object, world: World) {
    const entry = world.idp.get(key(this.id, this.person))!;
    world.idp.set(key(this.id, this.person), { answer: this.answer, version: entry.version + 1 });
    await checkInvariants(world);
  }
  toString = () => `IdpSays(${this.id}, ${this.person}, ${JSON.stringify(this.answer)})`;
}

class EditProvider implements fc.AsyncCommand<object, World> {
  constructor(
    readonly id: ProviderId,
    readonly rules: Rules,
  ) {}
  check = () => true;
  async run(_model: object, world: World) {
    world.rules[this.id] = this.rules;
    await world.review({ providers: [this.id] });
    await checkInvariants(world);
  }
  toString = () => `EditProvider(${this.id}, ${JSON.stringify(this.rules)})`;
}

/** A reload: every provider's rules replaced at once, the changed ones reviewed. */
class Reload implements fc.AsyncCommand<object, World> {
  constructor(readonly rules: Rules) {}
  check = () => true;
  async run(_model: object, world: World) {
    const changed = PROVIDER_IDS.filter((id) => JSON.stringify(world.rules[id]) !== JSON.stringify(this.rules));
    for (const id of PROVIDER_IDS) world.rules[id] = this.rules;
    await world.review({ providers: changed });
    await checkInvariants(world);
  }
  toString = () => `Reload(${JSON.stringify(this.rules)})`;
}

class EditOrganization implements fc.AsyncCommand<object, World> {
  constructor(readonly allowedDomains: string[]) {}
  check = () => true;
  async run(_model: object, world: World) {
    world.organization = { allowedDomains: this.allowedDomains, createUsers: true };
    await world.settings.update(world.organization);
    await world.review('all');
    await checkInvariants(world);
  }
  toString = () => `EditOrganization(${JSON.stringify(this.allowedDomains)})`;
}

class Recheck implements fc.AsyncCommand<object, World> {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(_model: object, world: World) {
    world.clock += INTERVAL;
    const live = await world.sessions.liveForAdmission({ limit: 10_000 });
    if (live.length > 0) {
      const chosen = live[this.pick % live.length]!;
      const session = (await world.sessions.findById(chosen.sessionId))!;
      const identity = (await world.accounts.getIdentity(chosen.identityId))!;
      const version = world.idp.get(`${chosen.providerId}/${identity.subject.split('/')[1]}`)!.version;
      const outcome = await world.refresher.refreshIfDue(session, identity, world.log);
      if (outcome === 'refreshed') world.confirmed.set(identity.id, version);
    }
    await checkInvariants(world);
  }
  toString = () => `Recheck(${this.pick})`;
}

const personArb = fc.constantFrom(...PEOPLE);
const providerArb = fc.constantFrom(...PROVIDER_IDS);
const domainsArb = fc.subarray([...DOMAINS]);
/**
 * What an IdP may come to say of a person: mostly verified, and as often another person's address as
 * their own (a takeover attempt), at either domain.
 */
const answerArb = (person: Person): fc.Arbitrary<Answer> =>
  fc.record({
    email: fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...DOMAINS).map((domain) => `${person}@${domain}`) },
      { weight: 2, arbitrary: fc.constantFrom(...PEOPLE.filter((other) => other !== person)).map((other) => `${other}@corp.example`) },
    ),
    verified: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    hostedDomain: fc.constantFrom<string | null>('corp.example', 'partner.example', null),
    tenant: fc.constantFrom(...TENANTS),
    organizations: fc.subarray(['acme', 'globex']),
  });
const rulesArb: fc.Arbitrary<Rules> = fc.record({
  allowedDomains: domainsArb,
  hostedDomains: domainsArb,
  tenants: fc.subarray([...TENANTS]),
  allowAnyTenant: fc.boolean(),
  allowedOrganizations: fc.subarray(['acme', 'globex']),
});

const signInArb = fc.tuple(providerArb, personArb).map(([id, person]) => new SignIn(id, person));
/** Signing in is listed thrice: sequences then hold several live sessions for the other commands to act on. */
const commands = [
  signInArb,
  signInArb,
  signInArb,
  fc.tuple(providerArb, personArb).chain(([id, person]) => answerArb(person).map((answer) => new IdpSays(id, person, answer))),
  fc.tuple(providerArb, rulesArb).map(([id, rules]) => new EditProvider(id, rules)),
  rulesArb.map((rules) => new Reload(rules)),
  domainsArb.map((domains) => new EditOrganization(domains)),
  fc.nat(20).map((pick) => new Recheck(pick)),
];

/** The property on one backend: `runs` sequences of up to `steps` commands, each on an empty database. */
export function admissionModelSuite(name: string, openDatabase: Opener, { runs, steps }: { runs: number; steps: number }): void {
  describe(`the admission invariant on ${name} (model-based)`, () => {
    it(
      'every live session passes the rules in force with what its IdP last said, whatever happens in between',
      async () => {
        await fc.assert(
          fc.asyncProperty(fc.commands(commands, { maxCommands: steps, size: 'max' }), async (sequence) => {
            const handle = await openDatabase();
            try {
              await fc.asyncModelRun(async () => ({ model: {}, real: await makeWorld(handle) }), sequence);
            } finally {
              await handle.close();
            }
          }),
          { numRuns: runs },
        );
      },
      180_000,
    );
  });
}
