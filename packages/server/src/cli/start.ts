import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { buildApp } from '../app.js';
import { autoWorkers } from '../config/cpuLimit.js';
import type { LoadedConfig } from '../config/load.js';
import { configWarnings } from '../config/schema.js';
import { startDevServices, type DevServices } from '../devServices.js';
import { listen } from '../http/listen.js';
import { clusterRegistry } from '../operations/metrics.js';
import { listenMetrics, type MetricsListener, type MetricsSource } from '../operations/metricsListener.js';
import { answerReadinessQuestions, workersReadiness } from '../operations/clusterReadiness.js';
import { readinessReport, type FullReadiness } from '../operations/health.js';
import { keepTickObjectShape } from '../http/tickObjectShape.js';
import { loggerOptions } from '../logger.js';
import { loadSecrets, SecretError } from '../secrets.js';
import { createServices } from '../services.js';
import { channelToPrimary, channelToWorkers, type PrimaryChannel } from '../cluster/channel.js';
import { stopWorker, workerReady } from '../cluster/lifecycle.js';
import { configFromPrimary, localReload, primaryReload, readConfigFrom, workerReload, type Reload } from '../reload.js';
import { relayChangesBetweenWorkers, workerChangeTransport } from '../events/clusterChanges.js';
import { countLimitsForWorkers } from '../limits/clusterLimits.js';
import { purgeLogoutTokenJtis } from '../storage/purge.js';
import { openDatabase } from '../storage/database.js';
import { SchemaTooNewError } from '../storage/migrate.js';
import { ID_TOKEN_KEY_PURPOSES, SigningKeys } from '../keys/signingKeys.js';
import { createTokenCipher } from '../sessions/tokenCipher.js';

/**
 * `start` (the default command): one process that serves, or with `workers:` above one a primary
 * that runs that many workers under node:cluster.
 */
export function start(loaded: LoadedConfig): Promise<number> {
  // auto: one per core this process may use, a container's CPU limit included (config/cpuLimit.ts).
  const workers = loaded.config.workers === 'auto' ? autoWorkers() : loaded.config.workers;
  if (workers > 1 && cluster.isPrimary) return startPrimary(loaded, workers);
  return serve(loaded);
}

/**
 * A worker of several serves the configuration in force, which its primary hands over (reload.ts):
 * the file may have been edited since, without a reload, or broken.
 */
export async function startWorker(): Promise<number> {
  // Until the configuration (and so the logger) is known, what the channel drops goes to stderr.
  let warn = (details: object, message: string): void => console.error(message, details);
  const primary = channelToPrimary({ warn: (details, message) => warn(details, message) });
  let inForce: LoadedConfig;
  try {
    inForce = await configFromPrimary(primary);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
  return serve(inForce, { primary, logTo: (logger) => (warn = (details, message) => logger.warn(details, message)) });
}

/**
 * Starting failed: the development processes already started stop, and a configuration that cannot
 * work or a database this build cannot use is one clear line (exit 2), not a stack trace.
 */
async function failedToStart(error: unknown, log: pino.Logger, devServices: DevServices | undefined): Promise<number> {
  await devServices?.stop();
  if (error instanceof SecretError || error instanceof SchemaTooNewError) {
    log.fatal(error.message);
    return 2;
  }
  throw error;
}

/**
 * The metrics listener of this configuration, in the process that gathers them (the only one, or the
 * primary of several workers); a port that cannot be had stops the start with one clear line.
 */
async function startMetrics(
  config: LoadedConfig['config'],
  source: MetricsSource | undefined,
  log: pino.Logger,
  readiness: () => Promise<FullReadiness>,
): Promise<MetricsListener | undefined | number> {
  if (!config.metrics || !source) return undefined;
  const { host, port } = config.metrics.listen;
  try {
    return await listenMetrics(source, host, port, log, { hosts: config.metrics.hosts, readiness });
  } catch (error) {
    log.fatal(`cannot listen for metrics on ${host}:${port} (metrics.listen): ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    return 2;
  }
}

/** How long stopping may take before the process exits regardless. */
const SHUTDOWN_DEADLINE_MS = 15_000;

/** A worker's channel to its primary, and where the channel's own warnings go once the logger exists. */
interface WorkerOf {
  primary: PrimaryChannel;
  logTo(log: pino.Logger): void;
}

async function serve({ config, file }: LoadedConfig, worker?: WorkerOf): Promise<number> {
  // Before the heap grows: see tickObjectShape.ts (a steady per-request cost on Node 20).
  keepTickObjectShape();
  const log = pino(loggerOptions(config));
  worker?.logTo(log);
  log.info({ config: file ?? 'built-in defaults', mode: config.mode }, 'starting Gatehouse');
  if (cluster.isPrimary) for (const warning of configWarnings(config)) log.warn({ config: file ?? 'built-in defaults' }, `configuration warning: ${warning}`);
  // SIGHUP reloads the configuration (systemd's ExecReload=kill -HUP $MAINPID). A worker leaves it to
  // its primary, which has every worker apply one reading of the file (reload.ts); it may still get
  // one (a terminal's hangup reaches the whole process group), and must not die of it.
  let reload: Reload | undefined = undefined;
  process.on('SIGHUP', () => {
    if (cluster.isWorker) return;
    if (!reload) log.warn('SIGHUP while starting: the configuration is reloaded only once Gatehouse is ready');
    else void reload({ trigger: 'SIGHUP' });
  });

  let devServices: DevServices | undefined;
  let services;
  try {
    // In a cluster the primary runs the development IdPs and the demo app, once for all workers.
    devServices = config.mode === 'development' && cluster.isPrimary ? await startDevServices(config, log) : undefined;
    services = await createServices(config, log, { node: worker ? process.env.GATEHOUSE_NODE_ID : undefined, file, primary: worker?.primary });
    // Every change this worker makes reaches its siblings at once, and theirs reach it
    // (events/clusterChanges.ts); the other nodes' come through PostgreSQL (events/pgChanges.ts).
    if (worker) services.changes.attach(workerChangeTransport(worker.primary, { log }));
  } catch (error) {
    return failedToStart(error, log, devServices);
  }
  const ready = services;
  // The metrics listener's /readyz is the primary's; the report is this worker's (operations/clusterReadiness.ts).
  if (worker) answerReadinessQuestions(() => readinessReport(ready), worker.primary);

  const reloadHere = worker ? workerReload(services, log, worker.primary) : localReload(services, readConfigFrom(file), log);
  const app = await buildApp(services, { loggerInstance: log, reload: reloadHere });
  const metricsListener = worker ? undefined : await startMetrics(config, services.metricsRegistry?.registry, log, () => readinessReport(ready));
  if (typeof metricsListener === 'number') {
    await app.close();
    await services.close();
    await devServices?.stop();
    return metricsListener;
  }
  const listening = await listen(app, config.listen.host, config.listen.port);
  // Every address the sockets are bound to, read from them (both loopbacks for `localhost`).
  log.info({ addresses: listening.addresses }, `listening on ${listening.addresses.join(' and ')}`);
  services.providers.start();
  reload = reloadHere;
  // The file may have narrowed who may sign in while Gatehouse was stopped: the live sessions it no
  // longer admits end now (sessions/admissionReview.ts), in the background. In a node of several
  // workers the first one reviews (were several to, each session would still end once).
  if (!cluster.isWorker || cluster.worker?.id === 1) {
    void services.reviewAdmission('all', { by: 'start' }).catch((error: unknown) => log.error({ err: error }, 'the live sessions could not be judged against the sign-in rules at start'));
  }
  // The OpenID Provider's expired codes and tokens, and its grants ended long enough ago.
  const { opStore } = services;
  const purge = setInterval(
    () =>
      void Promise.all([services.attempts.purgeExpired(), purgeLogoutTokenJtis(services.database.db), opStore.purgeExpired()]).catch((error: unknown) =>
        log.warn({ err: error }, 'purge failed'),
      ),
    60_000,
  );
  purge.unref();

  if (worker) worker.primary.notify(workerReady, {});
  else log.info(`Gatehouse is ready: open ${config.publicUrl}`);
  if (metricsListener) log.info(`Metrics for Prometheus: ${metricsListener.url}`);

  const reason = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    // A worker is told to stop by its primary (Ctrl-C also reaches it directly, as its process group's).
    worker?.primary.on(stopWorker, () => resolve('the primary stopping'));
    // The primary is gone (killed): a worker does not go on serving alone, unsupervised.
    if (worker) process.once('disconnect', () => resolve('the primary went away'));
  });
  // A second signal while stopping must not kill the process halfway.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  log.info({ reason }, 'stopping Gatehouse');
  clearInterval(purge);
  // Whatever still holds the process after this long (a stream that never ends, say) does not keep it up.
  setTimeout(() => {
    log.error(`still stopping after ${SHUTDOWN_DEADLINE_MS / 1000} s: exiting now`);
    log.flush();
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  // Together: closing the app tells open WebSockets it is going away, which the listeners wait for too.
  await Promise.all([listening.close(), app.close(), metricsListener?.close()]);
  await services.close();
  await devServices?.stop();
  log.flush();
  return 0;
}

/** How long a worker that exited unexpectedly waits before it is started again, at most. */
const MAX_RESTART_DELAY_MS = 30_000;

/**
 * `workers: auto` or a number: this process prepares what the workers share, then runs that many of
 * them under node:cluster, which share the listening sockets, and passes every change one of them makes
 * to the others. A worker that dies is started again (with backoff); SIGINT or SIGTERM stops them all.
 */
async function startPrimary({ config, file }: LoadedConfig, count: number): Promise<number> {
  let ready = 0;
  const log = pino(loggerOptions(config));
  log.info({ config: file ?? 'built-in defaults', mode: config.mode, workers: count }, 'starting Gatehouse');
  // Everything the primary and its workers say to each other (cluster/channel.ts).
  const channel = channelToWorkers(cluster, log);
  // SIGHUP: the file is read once here, and every worker applies that reading (reload.ts).
  const reload = primaryReload(channel, readConfigFrom(file), log, { config, file });
  process.on('SIGHUP', () => {
    if (ready < count) log.warn('SIGHUP while starting: the configuration is reloaded only once every worker is ready');
    else void reload({ trigger: 'SIGHUP' });
  });
  let devServices: DevServices | undefined;
  try {
    devServices = config.mode === 'development' ? await startDevServices(config, log) : undefined;
    // Before any worker: the schema is migrated, the development secrets and the first signing key
    // exist, so workers never race to create them.
    const secrets = loadSecrets(config);
    const database = await openDatabase(config, log);
    try {
      const cipher = createTokenCipher(secrets);
      // The OpenID Provider's ID token keys too: workers starting together must not race to make them.
      for (const purpose of ['assertion', ...ID_TOKEN_KEY_PURPOSES] as const) await new SigningKeys(database.db, cipher, undefined, undefined, purpose).load();
    } finally {
      await database.close();
    }
  } catch (error) {
    return failedToStart(error, log, devServices);
  }

  relayChangesBetweenWorkers(channel, log);
  const nodeId = randomUUID();
  countLimitsForWorkers(channel);
  let stopping = false;
  let restartDelay = 1_000;
  const fork = () => {
    // The workers share one node id: they ignore each other's notifications, which reach them over IPC.
    cluster.fork({ GATEHOUSE_NODE_ID: nodeId });
  };
  channel.on(workerReady, () => {
    restartDelay = 1_000;
    if (++ready === count) log.info(`Gatehouse is ready with ${count} workers: open ${config.publicUrl}`);
  });
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping) return;
    log.error({ worker: worker.process.pid, code, signal }, `a worker stopped unexpectedly; starting another in ${restartDelay / 1000} s`);
    setTimeout(fork, restartDelay).unref();
    restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
  });
  for (let index = 0; index < count; index++) fork();
  // The workers record; this process gathers their registries at each scrape and serves the sum.
  const metricsListener = await startMetrics(config, config.metrics ? clusterRegistry() : undefined, log, workersReadiness(channel));
  if (typeof metricsListener === 'number') {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
    await devServices?.stop();
    return metricsListener;
  }
  if (metricsListener) log.info(`Metrics for Prometheus: ${metricsListener.url}`);

  const reason = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  stopping = true;
  log.info({ reason }, 'stopping Gatehouse');
  await metricsListener?.close();
  setTimeout(() => {
    log.error(`still stopping after ${SHUTDOWN_DEADLINE_MS / 1000} s: exiting now`);
    log.flush();
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS + 2_000).unref();
  const running = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
  await Promise.all(
    running.map(
      (worker) =>
        new Promise<void>((resolve) => {
          worker.once('exit', () => resolve());
          if (worker.isConnected()) channel.notify(worker, stopWorker, {});
        }),
    ),
  );
  await devServices?.stop();
  log.flush();
  return 0;
}
