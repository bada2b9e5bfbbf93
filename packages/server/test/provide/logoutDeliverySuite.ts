import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpStore } from '../../src/provide/opStore.js';
import { LogoutDeliveryStore, type DeliveryToEnqueue, type RetryPolicy } from '../../src/provide/logoutDeliveryStore.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import { seedAnn } from '../support/seed.js';
import { seedGrant } from './support.js';

/**
 * The back-channel logout outbox (provide/logoutDeliveryStore.ts), written once and run on SQLite
 * (logoutDeliveryStore.test.ts) and on a real PostgreSQL server with a second pool as a second node
 * would have (logoutDeliveryPostgres.test.ts).
 */

export type Opener = (() => Promise<DatabaseHandle>) & { sibling?: () => Promise<DatabaseHandle> };

const T0 = 1_750_000_000_000; // epoch ms past 2^32: bigint columns, read back as numbers
const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });
const timeouts = { idleTimeout: 3_600_000, absoluteLifetime: 86_400_000, touchInterval: 60_000 };
const policy: RetryPolicy = { firstDelay: 1_000, maxDelay: 8_000, maxAttempts: 5, maxAge: 3_600_000 };

function delivery(grantId: string, extra: Partial<DeliveryToEnqueue> = {}): DeliveryToEnqueue {
  return { grantId, clientId: 'wiki', appId: 'wiki', userId: 'u1', sessionId: 's1', sid: `sid-${grantId}`, subject: 'sub', uri: 'https://wiki.example/logout', reason: 'sign-out', ...extra };
}

export function logoutDeliverySuite(name: string, open: Opener, { realConcurrency }: { realConcurrency: boolean }): void {
  describe(`the back-channel logout outbox on ${name}`, () => {
    let handle: DatabaseHandle;
    let sibling: DatabaseHandle | undefined;
    let now: number;
    const clock = () => now;
    let store: LogoutDeliveryStore;
    beforeEach(async () => {
      handle = await open();
      now = T0;
      store = new LogoutDeliveryStore(handle.db, clock, () => 0.5);
    });
    afterEach(async () => {
      await sibling?.close();
      sibling = undefined;
      await handle.close();
    });

    it('owes one logout per grant, however often and from however many places it is enqueued', async () => {
      expect(await store.enqueue([delivery('g1'), delivery('g2')])).toBe(2);
      // The revocation's listener and the sweep, or two nodes, enqueue the same grants again.
      expect(await store.enqueue([delivery('g1'), delivery('g2'), delivery('g3')])).toBe(1);
      expect(await store.enqueue([])).toBe(0);
      expect(await store.countsByApp()).toEqual([{ appId: 'wiki', pending: 3, delivered: 0, abandoned: 0 }]);
    });

    // Two nodes need two connections to one database: only where there are (PostgreSQL; SQLite's two
    // processes on one file are backchannelDelivery.test.ts's).
    if (realConcurrency) it('makes one row when two nodes enqueue the same grants at the same moment', async () => {
      sibling = await open.sibling!();
      const other = new LogoutDeliveryStore(sibling.db, clock);
      const grants = Array.from({ length: 50 }, (_, i) => delivery(`g${i}`));
      for (let round = 0; round < 5; round++) {
        const counts = await Promise.all([store.enqueue(grants), other.enqueue([...grants].reverse())]);
        expect(counts[0] + counts[1]).toBe(round === 0 ? 50 : 0);
      }
      expect((await store.countsByApp())[0]!.pending).toBe(50);
    });

    it('claims what is due once: a claimed delivery is not claimed again until its lease runs out', async () => {
      await store.enqueue([delivery('g1'), delivery('g2'), delivery('g3')]);
      const first = await store.claimDue(2, 60_000);
      expect(first.map((claim) => claim.grantId).sort()).toHaveLength(2);
      expect(first[0]).toMatchObject({ attempts: 0, claimedUntil: T0 + 60_000, uri: 'https://wiki.example/logout', clientId: 'wiki', reason: 'sign-out' });
      const second = await store.claimDue(10, 60_000);
      expect(second).toHaveLength(1);
      expect(await store.claimDue(10, 60_000)).toEqual([]);
      // The node holding them died: once the lease has run out another node takes them over.
      now = T0 + 60_000;
      const taken = await store.claimDue(10, 60_000);
      expect(taken).toHaveLength(3);
      // The dead node's claim is lost: what it records now is not recorded.
      expect(await store.recordDelivered(first[0]!)).toBe(false);
      expect(await store.recordFailed(first[0]!, 'late', policy)).toEqual({ outcome: 'lost' });
      expect(await store.release(first[0]!)).toBe(false);
      const retaken = taken.find((claim) => claim.id === first[0]!.id)!;
      expect(await store.recordDelivered(retaken)).toBe(true);
      expect(await store.forGrant(retaken.grantId)).toMatchObject({ deliveredAt: T0 + 60_000, attempts: 1, lastError: null });
    });

    it('releases a claim without counting an attempt: due again at once', async () => {
      await store.enqueue([delivery('g1')]);
      const [claim] = await store.claimDue(10, 60_000);
      expect(await store.release(claim!)).toBe(true);
      const [again] = await store.claimDue(10, 60_000);
      expect(again).toMatchObject({ id: claim!.id, attempts: 0 });
    });

    it('retries with exponential backoff and jitter, then abandons after the bound on attempts', async () => {
      const jittery = new LogoutDeliveryStore(handle.db, clock, () => 0);
      await jittery.enqueue([delivery('g1')]);
      const delays: number[] = [];
      for (let attempt = 1; attempt <= 5; attempt++) {
        const [claim] = await jittery.claimDue(10, 60_000);
        expect(claim).toMatchObject({ attempts: attempt - 1 });
        const outcome = await jittery.recordFailed(claim!, 'the app answered HTTP 503', policy);
        if (attempt < 5) {
          expect(outcome.outcome).toBe('retry');
          if (outcome.outcome !== 'retry') return;
          delays.push(outcome.nextAttemptAt - now);
          // Not due before its time.
          now = outcome.nextAttemptAt - 1;
          expect(await jittery.claimDue(10, 60_000)).toEqual([]);
          now = outcome.nextAttemptAt;
        } else {
          expect(outcome).toEqual({ outcome: 'abandoned', attempts: 5 });
        }
      }
      // 1 s, 2 s, 4 s, 8 s (capped), each jittered to half with a random of 0.
      expect(delays).toEqual([500, 1_000, 2_000, 4_000]);
      expect(await jittery.claimDue(10, 60_000)).toEqual([]);
      expect(await jittery.forGrant('g1')).toMatchObject({ attempts: 5, abandonedAt: now, deliveredAt: null, lastError: 'the app answered HTTP 503' });
      expect(await jittery.countsByApp()).toEqual([{ appId: 'wiki', pending: 0, delivered: 0, abandoned: 1 }]);
    });

    it('jitters between half the backoff and all of it', async () => {
      for (const [random, expected] of [[0, 500], [0.5, 750], [0.998, 999]] as const) {
        const jittery = new LogoutDeliveryStore(handle.db, clock, () => random);
        await jittery.enqueue([delivery(`g-${random}`)]);
        const [claim] = await jittery.claimDue(1, 60_000);
        const outcome = await jittery.recordFailed(claim!, 'x', policy);
        expect(outcome).toMatchObject({ outcome: 'retry', nextAttemptAt: now + expected });
      }
    });

    it('abandons a delivery whose next attempt would come after its time ran out', async () => {
      await store.enqueue([delivery('g1')]);
      now = T0 + policy.maxAge - 100;
      const [claim] = await store.claimDue(10, 60_000);
      expect(await store.recordFailed(claim!, 'refused', policy)).toEqual({ outcome: 'abandoned', attempts: 1 });
    });

    it('keeps what went wrong short and storable, never anything else', async () => {
      await store.enqueue([delivery('g1')]);
      const [claim] = await store.claimDue(10, 60_000);
      await store.recordFailed(claim!, `bad\u0000${'x'.repeat(1_000)}`, policy);
      const row = await store.forGrant('g1');
      expect(row!.lastError).toHaveLength(300);
      expect(row!.lastError).not.toContain('\u0000');
    });

    it('abandons at once a delivery its app no longer takes', async () => {
      await store.enqueue([delivery('g1')]);
      const [claim] = await store.claimDue(10, 60_000);
      expect(await store.abandon(claim!, 'the app no longer has a back-channel logout URI')).toBe(true);
      expect(await store.forGrant('g1')).toMatchObject({ abandonedAt: T0, attempts: 0 });
      expect(await store.claimDue(10, 60_000)).toEqual([]);
    });

    it('counts per app what is pending, delivered and abandoned, and purges what finished long ago', async () => {
      await store.enqueue([delivery('g1'), delivery('g2'), delivery('g3'), delivery('c1', { appId: 'chat', clientId: 'chat' })]);
      const claims = await store.claimDue(10, 60_000);
      await store.recordDelivered(claims.find((claim) => claim.grantId === 'g1')!);
      await store.abandon(claims.find((claim) => claim.grantId === 'g2')!, 'gone');
      expect(await store.countsByApp()).toEqual([
        { appId: 'chat', pending: 1, delivered: 0, abandoned: 0 },
        { appId: 'wiki', pending: 1, delivered: 1, abandoned: 1 },
      ]);
      expect(await store.purgeFinished(T0 - 1)).toBe(0);
      expect(await store.purgeFinished(T0)).toBe(2);
      expect(await store.countsByApp()).toEqual([
        { appId: 'chat', pending: 1, delivered: 0, abandoned: 0 },
        { appId: 'wiki', pending: 1, delivered: 0, abandoned: 0 },
      ]);
    });

    if (realConcurrency) it('never hands one delivery to two nodes claiming at once (compare-and-set on claimed_until)', async () => {
      sibling = await open.sibling!();
      const other = new LogoutDeliveryStore(sibling.db, clock);
      await store.enqueue(Array.from({ length: 300 }, (_, i) => delivery(`g${i}`)));
      const seen = new Map<string, number>();
      // Two nodes claim small batches as fast as they can until nothing is left; then the leases run out and they race again.
      for (let round = 0; round < 3; round++) {
        const drain = async (node: LogoutDeliveryStore) => {
          for (;;) {
            const claims = await node.claimDue(7, 60_000);
            if (claims.length === 0) return;
            for (const claim of claims) seen.set(`${round}/${claim.id}`, (seen.get(`${round}/${claim.id}`) ?? 0) + 1);
          }
        };
        await Promise.all([drain(store), drain(other), drain(store), drain(other)]);
        now += 60_000;
      }
      expect(seen.size).toBe(900);
      expect([...seen.values()].every((count) => count === 1)).toBe(true);
    });

    describe('the sweep’s queries', () => {
      let sessions: SessionStore;
      beforeEach(async () => {
        await seedAnn(handle.db);
        sessions = new SessionStore(handle.db, cipher, timeouts, clock);
      });
      const newSession = async () => (await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' })).session;

      it('finds the live grants of sessions revoked, idle, past their lifetime or gone, and no other', async () => {
        const live = await newSession();
        const revoked = await newSession();
        const idle = await newSession();
        const old = await newSession();
        await seedGrant(handle.db, { grantId: 'live', appId: 'wiki', sessionId: live.id, createdAt: T0 });
        await seedGrant(handle.db, { grantId: 'revoked', appId: 'wiki', sessionId: revoked.id, createdAt: T0 + 1 });
        await seedGrant(handle.db, { grantId: 'idle', appId: 'wiki', sessionId: idle.id, createdAt: T0 + 2 });
        await seedGrant(handle.db, { grantId: 'old', appId: 'wiki', sessionId: old.id, createdAt: T0 + 3 });
        await seedGrant(handle.db, { grantId: 'gone', appId: 'wiki', sessionId: 'no-such-session', createdAt: T0 + 4 });
        await sessions.revoke(revoked.id, 'revoked-by-admin');
        // `idle` sees no activity for the idle timeout; `live` and `old` do, but `old` reaches its absolute lifetime.
        now = T0 + timeouts.idleTimeout - 1;
        await sessions.touch(live);
        await sessions.touch(old);
        expect((await store.grantsOfEndedSessions(100)).map((grant) => grant.grantId)).toEqual(['revoked', 'gone']);
        now = T0 + timeouts.idleTimeout;
        expect(await store.grantsOfEndedSessions(100)).toEqual([
          { grantId: 'revoked', sessionId: revoked.id, reason: 'revoked-by-admin' },
          { grantId: 'idle', sessionId: idle.id, reason: 'session-expired' },
          { grantId: 'gone', sessionId: 'no-such-session', reason: 'session-gone' },
        ]);
        now = T0 + timeouts.absoluteLifetime;
        expect((await store.grantsOfEndedSessions(2)).map((grant) => grant.grantId)).toEqual(['live', 'revoked']);
        // Once ended, a grant is not found again.
        await new OpStore(handle.db, clock).revokeGrants({ sessionIds: [revoked.id, idle.id, 'no-such-session'] }, 'x');
        expect((await store.grantsOfEndedSessions(100)).map((grant) => grant.grantId)).toEqual(['live', 'old']);
      });

      it('finds the grants ended lately without a logout owed, for the apps that take them', async () => {
        const session = await newSession();
        for (const [grantId, appId] of [['w1', 'wiki'], ['w2', 'wiki'], ['c1', 'chat'], ['n1', 'notes']] as const) await seedGrant(handle.db, { grantId, appId, sessionId: session.id });
        await seedGrant(handle.db, { grantId: 'still-live', appId: 'wiki', sessionId: 'other' });
        await new OpStore(handle.db, clock).revokeGrants({ sessionIds: [session.id] }, 'sign-out');
        await store.enqueue([delivery('w1')]);
        const found = await store.endedGrantsWithoutDelivery(['wiki', 'chat'], T0 - 1, 100);
        expect(found.map((grant) => grant.grantId).sort()).toEqual(['c1', 'w2']);
        expect(found.find((grant) => grant.grantId === 'w2')).toMatchObject({ appId: 'wiki', clientId: 'wiki', sessionId: session.id, userId: 'u1', reason: 'sign-out' });
        // Only those ended after `since`, and none for no app.
        expect(await store.endedGrantsWithoutDelivery(['wiki', 'chat'], T0, 100)).toEqual([]);
        expect(await store.endedGrantsWithoutDelivery([], T0 - 1, 100)).toEqual([]);
      });
    });
  });
}
