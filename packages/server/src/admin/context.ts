import type { FastifyRequest } from 'fastify';
import type { AuditEntry } from '../audit/auditLog.js';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { UserDirectory, type UserSummary } from './userDirectory.js';

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
export const problem = { $ref: 'problem#' } as const;
export const errors = { 400: problem, 401: problem, 403: problem, 404: problem, 409: problem } as const;
export const pageQuery = {
  page: { type: 'integer', minimum: 1, maximum: 100_000, default: 1 },
  pageSize: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
} as const;

interface Person {
  id: string;
  email: string;
}

type PeopleEvent = Omit<AuditEntry, 'time'> & { time: string | null; actor: Person | null; target: Person | null };
type UserView = Omit<UserSummary, 'createdAt' | 'lastSignInAt'> & { createdAt: string | null; lastSignInAt: string | null };

/** What every admin route module shares: the services, the user directory and small helpers. */
export interface AdminContext {
  services: Services;
  directory: UserDirectory;
  /** The admin making this request (the admin hook has already checked there is one). */
  actorOf(request: FastifyRequest): Promise<CurrentSession>;
  /** Audit events with the actor's and target's emails (one query per page). */
  withPeople(events: AuditEntry[]): Promise<PeopleEvent[]>;
  summary(user: UserSummary): UserView;
  existingUser(id: string): Promise<UserSummary>;
}

export function adminContext(services: Services): AdminContext {
  const directory = new UserDirectory(services.database.db, services.config.admins, services.providers);
  return {
    services,
    directory,
    actorOf: async (request) => (await request.currentSession())!,
    async withPeople(events) {
      const ids = [...new Set(events.flatMap((event) => [event.actorUserId, event.targetUserId]).filter((id): id is string => Boolean(id)))];
      const people = ids.length > 0 ? await services.database.db.selectFrom('users').select(['id', 'email']).where('id', 'in', ids).execute() : [];
      const byId = new Map(people.map((person) => [person.id, person]));
      const person = (id: string | null) => (id ? (byId.get(id) ?? { id, email: '' }) : null);
      return events.map((event) => ({ ...event, time: iso(event.time), actor: person(event.actorUserId), target: person(event.targetUserId) }));
    },
    summary: (user) => ({ ...user, createdAt: iso(user.createdAt), lastSignInAt: iso(user.lastSignInAt) }),
    async existingUser(id) {
      const user = await directory.get(id);
      if (!user) throw new AppError('not_found');
      return user;
    },
  };
}
