import type { Worker } from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { RequestContext } from './audit/auditLog.js';
import { unreachableAmong, unreachableMessage } from './providers/reachability.js';
import { AskFailed, question, type PrimaryChannel, type WorkersChannel } from './cluster/channel.js';
import { builtInDefaults } from './config/defaults.js';
import { ConfigError, loadConfig, parseConfig } from './config/load.js';
import {
  describeChanges,
  isUnchanged,
  providersTurnedOff,
  restartOnlyChanges,
  type ReloadRequest,
  type ReloadResult,
} from './config/reloadable.js';
import { configWarnings, type Config } from './config/schema.js';
import type { Services } from './services.js';

/**
 * Config reload without a restart (SIGHUP, or an admin in the console): the file is read again by the
 * loader `start` and `check-config` use and validated whole; a change to a setting only a restart
 * applies refuses the whole file (nothing of it applied, as nginx and Envoy refuse a configuration
 * they cannot take whole). Otherwise everything built from it (the providers' and apps' registries)
 * is prepared first, then put in force in one synchronous step: no request sees half of it; a request
 * that started before keeps what it already read (its app, its decision). Sessions live in the database
 * and stay; open WebSockets and downloads stay open, each answering to the new policies at once
 * (proxy/liveAccess.ts). Providers the file removes or turns off end their sessions, as turning one
 * off in the console does; the live sessions of providers it changes are judged by the new rules, and
 * those that no longer pass end (sessions/admissionReview.ts).
 */

/** Reads the configuration again; throws ConfigError (or a read error) when it cannot be used. */
export type ReadConfig = () => Config;

export type Reload = (request: ReloadRequest) => Promise<ReloadResult>;

/**
 * Reads the configuration from where it came at start, with the loader `start` and `check-config` use:
 * the same file, or the built-in defaults again (never a file that has appeared since: without a file
 * there is nothing to read again, and a reload answers that nothing changed).
 */
export function readConfigFrom(file: string | undefined, env: NodeJS.ProcessEnv = process.env): ReadConfig {
  return file ? () => loadConfig({ file, env }).config : () => parseConfig(builtInDefaults, { env, source: 'built-in defaults' });
}

/** Why a configuration cannot be used, one line per problem, without the file's values. */
export function readProblems(error: unknown): string[] {
  if (error instanceof ConfigError) return error.problems;
  return [error instanceof Error ? error.message : String(error)];
}

/** The file read and validated: the configuration, or why it cannot be used. */
export function readAgain(read: ReadConfig): { config: Config } | { problems: string[] } {
  try {
    return { config: read() };
  } catch (error) {
    return { problems: readProblems(error) };
  }
}

export interface ApplyOptions {
  /**
   * Whether this process does what happens once per node: ends the sessions of providers turned off,
   * records the audit event and writes the log line. One worker of a node does (reload.ts's primary
   * picks it); the others only put the configuration in force.
   */
  lead: boolean;
}

/** Refuses a reload: the configuration in force stays, and /readyz says why until the next attempt. */
async function refuse(services: Services, log: FastifyBaseLogger, request: ReloadRequest, problems: string[], { lead }: ApplyOptions): Promise<ReloadResult> {
  services.running.refused(problems);
  if (lead) {
    log.error({ file: services.running.file, trigger: request.trigger, problems }, 'configuration reload refused: the configuration in force is unchanged');
    await record(services, log, request, 'failure', { problems });
  }
  return { outcome: 'refused', problems };
}

/** Puts a validated configuration in force in this process, or refuses it whole. */
export async function applyConfig(services: Services, next: Config, log: FastifyBaseLogger, request: ReloadRequest, options: ApplyOptions): Promise<ReloadResult> {
  const before = services.running.current;
  const restart = restartOnlyChanges(before, next);
  if (restart.length > 0) {
    const problems = restart.map((key) => `${key}: changed, but only a restart applies it (restart Gatehouse, or put the value in force back)`);
    return refuse(services, log, request, problems, options);
  }
  const changes = describeChanges(before, next);
  if (isUnchanged(changes)) {
    services.running.unchanged();
    if (!options.lead) return { outcome: 'unchanged', changes, sessionsEnded: 0, warnings: [] };
    // Without a file there is nothing to read again: the built-in defaults are what they were at start.
    log.info({ file: services.running.file, trigger: request.trigger }, `configuration reloaded: nothing changed${services.running.file ? '' : ' (no configuration file: Gatehouse runs on its built-in defaults)'}`);
    await record(services, log, request, 'success', { outcome: 'unchanged' });
    return { outcome: 'unchanged', changes, sessionsEnded: 0, warnings: await warningsOf(services, next, log) };
  }

  // Everything built from the new configuration first; then all of it in force in one step.
  const providersInForce = services.providers.stageConfigProviders(next.providers);
  const appsInForce = services.apps.stageConfigApps(next.apps);
  services.running.replace(next);
  providersInForce();
  // Tells open WebSockets and streams to answer to the new policies, admins and providers at once. Every
  // app is a new object now, changed or not, so no access decision made before is reused after.
  appsInForce();
  log.level = next.log.level;

  if (!options.lead) return { outcome: 'applied', changes, sessionsEnded: 0, warnings: [] };
  for (const warning of configWarnings(next)) log.warn({ file: services.running.file }, `configuration warning: ${warning}`);
  const sessionsEnded = (await endSessionsOf(services, log, request, before, next)) + (await reviewChanged(services, log, request, changes.providers.changed));
  log.info({ file: services.running.file, trigger: request.trigger, ...changes, sessionsEnded }, 'configuration reloaded');
  await record(services, log, request, 'success', { outcome: 'applied', changes, sessionsEnded });
  return { outcome: 'applied', changes, sessionsEnded, warnings: await warningsOf(services, next, log) };
}

/**
 * What the operator should hear once a configuration is in force: its trust warnings, and each of its
 * providers whose IdP does not answer now (the /readyz check: discovery where it was not made yet, a
 * fresh fetch of the JWKS, each within its short timeout, all at once). Warnings: an IdP down for a
 * minute does not make a configuration wrong.
 */
async function warningsOf(services: Services, config: Config, log: FastifyBaseLogger): Promise<string[]> {
  let statuses: Awaited<ReturnType<Services['providers']['statuses']>> = [];
  try {
    statuses = await services.providers.statuses();
  } catch (error) {
    log.warn({ err: error }, 'could not check whether the providers answer after the reload');
  }
  const unreachable = unreachableAmong(statuses, config.providers).map((provider) => {
    const index = config.providers.findIndex((candidate) => candidate.id === provider.id);
    return `providers[${index}] (${provider.id}).issuer: ${unreachableMessage(provider)}`;
  });
  return [...configWarnings(config), ...unreachable];
}

/** The sessions of providers the new file removes or turns off end, as when an admin turns one off. */
async function endSessionsOf(services: Services, log: FastifyBaseLogger, request: ReloadRequest, before: Config, next: Config): Promise<number> {
  let total = 0;
  for (const id of providersTurnedOff(before, next)) {
    try {
      const ended = await services.sessions.revokeForProvider(id, 'provider-disabled');
      total += ended.length;
      const name = before.providers.find((provider) => provider.id === id)?.name ?? id;
      const removed = !next.providers.some((provider) => provider.id === id);
      await services.audit.record({
        type: 'provider_disabled',
        ...actorFields(request),
        providerId: id,
        details: { provider: { id, name }, by: 'config', before: { enabled: true }, after: removed ? null : { enabled: false }, sessionsEnded: ended.length },
      });
    } catch (error) {
      // The provider is no longer offered nor accepted (the resolver refuses its sessions); the rows are
      // ended by the next reload or when an admin revokes them.
      log.error({ err: error, provider: id }, 'configuration reloaded, but the sessions of a provider it turned off could not be ended');
    }
  }
  return total;
}

/**
 * The live sessions of the providers the file changed are judged by the rules as they are now, and
 * those that no longer pass end (a domain, tenant or organisation removed): sessions/admissionReview.ts.
 */
async function reviewChanged(services: Services, log: FastifyBaseLogger, request: ReloadRequest, changed: readonly string[]): Promise<number> {
  if (changed.length === 0) return 0;
  try {
    const actor = actorFields(request);
    return await services.reviewAdmission({ providers: changed }, { by: 'reload', actorUserId: actor.actorUserId, request: actor.request });
  } catch (error) {
    // The rules are in force for every sign-in and re-check from now on; the sessions they no longer
    // admit end at their next claims check, or at the next review (a reload, a restart).
    log.error({ err: error, providers: changed }, 'configuration reloaded, but the live sessions could not be judged against the new sign-in rules');
    return 0;
  }
}

function actorFields(request: ReloadRequest): { actorUserId?: string; sessionId?: string; request?: RequestContext } {
  const { actor } = request;
  if (!actor) return {};
  return { actorUserId: actor.userId, sessionId: actor.sessionId, request: { ip: actor.ip, headers: { 'user-agent': actor.userAgent } } };
}

/** One `config_reloaded` audit event per reload: its outcome and summary, never a value of the file. */
async function record(services: Services, log: FastifyBaseLogger, request: ReloadRequest, outcome: 'success' | 'failure', details: Record<string, unknown>): Promise<void> {
  try {
    await services.audit.record({ type: 'config_reloaded', outcome, ...actorFields(request), details: { trigger: request.trigger, file: services.running.file ?? null, ...details } });
  } catch (error) {
    log.error({ err: error }, 'could not record the configuration reload in the audit log');
  }
}

/** One reload at a time, in the order asked (a SIGHUP while the console's reload runs waits for it). */
function oneAtATime<A extends unknown[]>(reload: (...args: A) => Promise<ReloadResult>): ((...args: A) => Promise<ReloadResult>) & { idle(): Promise<unknown> } {
  let queue: Promise<unknown> = Promise.resolve();
  const run = (...args: A) => {
    const result = queue.then(() => reload(...args));
    queue = result.catch(() => undefined);
    return result;
  };
  /** Settles once every reload asked so far has ended. */
  run.idle = () => queue;
  return run;
}

/** A process on its own (`workers: 1`): reads the file and applies it here. */
export function localReload(services: Services, read: ReadConfig, log: FastifyBaseLogger): Reload {
  return oneAtATime(async (request) => {
    const reading = readAgain(read);
    if ('problems' in reading) return refuse(services, log, request, reading.problems, { lead: true });
    return applyConfig(services, reading.config, log, request, { lead: true });
  });
}

/* Between the primary and its workers (`workers:` above 1), over the node's channel (cluster/channel.ts). */

const strings = z.array(z.string());
const entryChanges = z.strictObject({ added: strings, removed: strings, changed: strings });
const reloadRequestSchema = z.strictObject({
  trigger: z.enum(['SIGHUP', 'console']),
  actor: z.strictObject({ userId: z.string(), sessionId: z.string(), ip: z.string().optional(), userAgent: z.string().optional() }).optional(),
}) satisfies z.ZodType<ReloadRequest>;
const reloadResultSchema = z.discriminatedUnion('outcome', [
  z.strictObject({
    outcome: z.enum(['applied', 'unchanged']),
    changes: z.strictObject({ providers: entryChanges, apps: entryChanges, admins: z.strictObject({ added: strings, removed: strings }), settings: strings }),
    sessionsEnded: z.number().int().nonnegative(),
    warnings: strings,
  }),
  z.strictObject({ outcome: z.literal('refused'), problems: strings }),
]) satisfies z.ZodType<ReloadResult>;
/**
 * The configuration as the primary's config schema made it (config/schema.ts). The worker cannot judge it
 * with that schema again (it is the schema's output, not a file: durations are numbers, the environment
 * is read), so it takes it from the one process it trusts more than itself, checked for its shape.
 */
const configInForce = z.custom<Config>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'not a configuration');

/** Primary → worker: put this reading of the file in force (or record why there is none); answered with how it went. */
const applyQuestion = question(
  'config-apply',
  z.union([
    z.strictObject({ lead: z.boolean(), request: reloadRequestSchema, config: configInForce }),
    z.strictObject({ lead: z.boolean(), request: reloadRequestSchema, problems: strings }),
  ]),
  reloadResultSchema,
);
/** Worker → primary: an admin asked this worker for a reload; answered with the node's outcome. */
const reloadQuestion = question('config-reload', reloadRequestSchema, reloadResultSchema);
/**
 * Worker → primary, as it starts: which configuration is in force, and from which file? The answer holds
 * the secrets: it travels over the node's IPC pipe (between the two processes), never on a command line
 * or in the environment, and is never logged.
 */
const inForceQuestion = question('config-in-force', z.strictObject({}), z.strictObject({ config: configInForce, file: z.string().nullable() }));

/** How long the primary waits for a worker to apply a configuration, and a worker for the primary. */
const WORKER_DEADLINE_MS = 30_000;

/**
 * A worker's side: it applies what the primary sends, and asks the primary when an admin asks it (so
 * that every worker of the node applies one reading of the file). The returned function is the reload
 * the console calls.
 */
export function workerReload(services: Services, log: FastifyBaseLogger, channel: Pick<PrimaryChannel, 'answer' | 'ask'>): Reload {
  channel.answer(applyQuestion, ({ lead, request, ...read }) => {
    const applied = 'config' in read ? applyConfig(services, read.config, log, request, { lead }) : refuse(services, log, request, read.problems, { lead });
    return applied.catch((error: unknown): ReloadResult => {
      log.error({ err: error }, 'could not apply the configuration');
      return { outcome: 'refused', problems: readProblems(error) };
    });
  });
  return async (request) => {
    try {
      return await channel.ask(reloadQuestion, request, { deadline: WORKER_DEADLINE_MS * 2 });
    } catch (error) {
      if (error instanceof AskFailed && error.reason === 'deadline') throw new Error('the node did not finish reloading its configuration in time');
      throw error;
    }
  };
}

/** How long a starting worker waits for its primary to hand it the configuration in force. */
const START_DEADLINE_MS = 30_000;

/**
 * A worker's start (`workers:`): the configuration in force, asked of the primary. Not the file: since
 * the last start or reload it may have been edited without a reload, or broken, and a worker started
 * again after a crash must serve what its siblings serve.
 */
export async function configFromPrimary(channel: Pick<PrimaryChannel, 'ask'>, deadlineMs = START_DEADLINE_MS): Promise<{ config: Config; file: string | undefined }> {
  try {
    const { config, file } = await channel.ask(inForceQuestion, {}, { deadline: deadlineMs });
    return { config, file: file ?? undefined };
  } catch (error) {
    if (error instanceof AskFailed && error.reason === 'deadline') throw new Error(`the primary process did not hand over the configuration within ${deadlineMs / 1000} s`);
    throw error;
  }
}

export interface PrimaryReloadOptions {
  /** The configuration in force at start: what a worker is handed until a reload applies another. */
  config: Config;
  /** The file it came from (undefined: the built-in defaults). */
  file: string | undefined;
}

/**
 * The primary's side: SIGHUP (returned function) or a worker's request reads the file once, and every
 * worker applies that one reading; one of them (the one asked, else the first) is the lead. The outcome
 * is the lead's, or refused when a worker could not apply it (each worker says why in its log).
 *
 * The primary keeps the configuration in force (the one at start, then each the lead applied) and
 * hands it to every worker as it starts, one started again after a crash included; a worker starting
 * while a reload runs is answered once the reload has ended. The primary's own log follows `log.level`.
 */
export function primaryReload(channel: Pick<WorkersChannel, 'answer' | 'ask' | 'workers'>, read: ReadConfig, log: FastifyBaseLogger, start: PrimaryReloadOptions): Reload {
  let inForce = start.config;
  const reload = oneAtATime(async (request: ReloadRequest, asking?: Worker): Promise<ReloadResult> => {
    const workers = channel.workers();
    if (workers.length === 0) return { outcome: 'refused', problems: ['no worker is running to apply it'] };
    const lead = asking && workers.includes(asking) ? asking : workers[0]!;
    const reading = readAgain(read);
    const results = await Promise.all(
      workers.map((worker) =>
        channel.ask(worker, applyQuestion, { lead: worker === lead, request, ...reading }, { deadline: WORKER_DEADLINE_MS }).catch(
          (error: unknown): ReloadResult => ({
            outcome: 'refused',
            problems: [error instanceof AskFailed && error.reason === 'deadline' ? 'it did not answer in time' : error instanceof AskFailed && error.reason === 'gone' ? 'it stopped while reloading' : readProblems(error).join('; ')],
          }),
        ),
      ),
    );
    // The lead refused: every worker did, for the same reason (the lead logged it).
    const leads = results[workers.indexOf(lead)]!;
    if (leads.outcome === 'refused') return leads;
    // The lead has it in force: so will any worker started from now on.
    if ('config' in reading) {
      inForce = reading.config;
      log.level = inForce.log.level;
    }
    // The lead applied it and another worker could not: the node is not of one mind; said loudly.
    const failed = results.flatMap((result, index) => (result.outcome === 'refused' ? result.problems.map((problem) => `worker ${workers[index]!.process.pid}: ${problem}`) : []));
    if (failed.length > 0) {
      log.error({ problems: failed }, 'configuration reload: some workers did not apply it (restart Gatehouse to bring them in line)');
      return { outcome: 'refused', problems: failed };
    }
    return leads;
  });

  channel.answer(reloadQuestion, (request, from) =>
    reload(request, from).catch((error: unknown) => {
      log.error({ err: error }, 'configuration reload failed');
      throw error;
    }),
  );
  channel.answer(inForceQuestion, async () => {
    await reload.idle();
    return { config: inForce, file: start.file ?? null };
  });
  return (request) => reload(request);
}
