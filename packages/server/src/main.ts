#!/usr/bin/env node
import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { autoWorkers } from './config/cpuLimit.js';
import { ConfigError, loadConfig, type LoadedConfig } from './config/load.js';
import { countProblems, placeProblems, renderProblems, type ConfigPath, type ConfigProblem, type FoundProblem } from './config/problems.js';
import { configWarnings, providerWarnings } from './config/schema.js';
import { ONLINE_CHECK_TIMEOUT_MS, unreachableMessage, unreachableProviders } from './providers/reachability.js';
import { startDevServices, type DevServices } from './devServices.js';
import { listen } from './http/listen.js';
import { clusterRegistry } from './http/metrics.js';
import { listenMetrics, type MetricsListener, type MetricsSource } from './http/metricsListener.js';
import { answerReadinessQuestions, workersReadiness } from './http/clusterReadiness.js';
import { readinessReport, type FullReadiness } from './http/health.js';
import { keepTickObjectShape } from './http/tickObjectShape.js';
import { loggerOptions } from './logger.js';
import { loadSecrets, SecretError, secretProblems } from './secrets.js';
import { createServices } from './services.js';
import { configFromPrimary, localReload, primaryReload, readConfigFrom, workerReload, type Reload } from './reload.js';
import { relayChangesBetweenWorkers, workerChangeTransport } from './storage/clusterChanges.js';
import { countLimitsForWorkers } from './http/clusterLimits.js';
import { announceChange } from './storage/pgChanges.js';
import { purgeLogoutTokenJtis } from './storage/purge.js';
import { describeDatabase, openDatabase } from './storage/database.js';
import { migrateToLatest, SchemaTooNewError } from './storage/migrate.js';
import { copyDatabase, CopyRefusedError, describeLocation, parseDatabaseLocation, type CopySummary, type DatabaseLocation } from './storage/copyDatabase.js';
import { SigningKeys } from './authorize/signingKeys.js';
import { createTokenCipher } from './sessions/tokenCipher.js';

const USAGE = `Usage: gatehouse [command] [--config <file>]

Commands:
  start          run Gatehouse (default)
  check-config [--online] [--strict]
                 validate the configuration and exit: every problem at once, each at its line and
                 column (exit 2 when there is one). --online also asks every enabled provider's IdP
                 for its discovery document (${ONLINE_CHECK_TIMEOUT_MS / 1000} s each, all at once) and warns about
                 those that do not answer; --strict makes every warning an error.
  migrate        bring the database schema up to date and exit
  rotate-signing-key
                 make a new key sign identity assertions; the old one stays published in
                 /.gatehouse/jwks.json for 24 hours so assertions in flight still verify
                 (on PostgreSQL the running nodes switch at once; on SQLite, restart Gatehouse)
  copy-database --from <sqlite:file | postgres://…> --to <postgres://… | sqlite:file>
                 copy every table of one Gatehouse database into a new, empty one (e.g. from
                 SQLite to PostgreSQL); sessions stay signed in when the new nodes use the same
                 secrets. Stop Gatehouse first. Put the password in PGPASSWORD, not the URL.

The configuration file is --config, else $GATEHOUSE_CONFIG, else ./gatehouse.yaml if it exists,
else the built-in development defaults.`;

async function main(argv: string[]): Promise<number> {
  // A worker of several serves the configuration in force, which its primary hands over (reload.ts):
  // the file may have been edited since, without a reload, or broken.
  if (cluster.isWorker) {
    let inForce: LoadedConfig;
    try {
      inForce = await configFromPrimary();
    } catch (error) {
      console.error(error instanceof Error ? error.message : String(error));
      return 1;
    }
    return start(inForce);
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      from: { type: 'string' },
      to: { type: 'string' },
      online: { type: 'boolean' },
      strict: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const command = positionals[0] ?? 'start';
  if (!['start', 'check-config', 'migrate', 'rotate-signing-key', 'copy-database'].includes(command)) {
    console.error(`Unknown command "${command}".\n\n${USAGE}`);
    return 2;
  }

  let loaded: LoadedConfig;
  try {
    loaded = loadConfig({ file: values.config });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error([...renderProblems(error.found, error.fileName), `Invalid configuration (${error.fileName ?? error.source}): ${countProblems(error.found)}.`].join('\n'));
      return 2;
    }
    throw error;
  }

  const { config } = loaded;
  if (command === 'check-config') return checkConfig(loaded, { online: values.online === true, strict: values.strict === true });
  if (command === 'rotate-signing-key') {
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
  if (command === 'migrate') {
    // On PostgreSQL several nodes may run this at once: they take turns (storage/migrate.ts).
    let ran: string[];
    try {
      const database = await openDatabase(config, undefined, { migrate: false });
      try {
        ran = await migrateToLatest(database.db);
      } finally {
        await database.close();
      }
    } catch (error) {
      console.error(error instanceof Error ? error.message : String(error));
      return 1;
    }
    console.log(`Database schema is up to date (${describeDatabase(config)})${ran.length > 0 ? `: ran ${ran.join(', ')}` : ''}.`);
    return 0;
  }
  if (command === 'copy-database') {
    let from: DatabaseLocation, to: DatabaseLocation;
    try {
      if (values.from === undefined || values.to === undefined) throw new CopyRefusedError('copy-database needs --from and --to');
      [from, to] = [parseDatabaseLocation(values.from, '--from'), parseDatabaseLocation(values.to, '--to')];
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
  // auto: one per core this process may use, a container's CPU limit included (config/cpuLimit.ts).
  const workers = config.workers === 'auto' ? autoWorkers() : config.workers;
  if (workers > 1 && cluster.isPrimary) return startPrimary(loaded, workers);
  return start(loaded);
}

/**
 * `check-config` once the file is valid: what start would still refuse (the keys' encoding), the
 * warnings (trust settings, and with `--online` each IdP that does not answer), each at its place in
 * the file; then one line that sums it up. Exit 2 on any error (or warning, with `--strict`), else 0.
 */
async function checkConfig({ config, file, located }: LoadedConfig, { online, strict }: { online: boolean; strict: boolean }): Promise<number> {
  const name = located?.name ?? file ?? 'built-in defaults';
  // A provider by its place in the file (config.providers starts with the development IdPs).
  const providerPath = (id: string, index: number): ConfigPath => {
    const inFile = located?.indexWhere(['providers'], 'id', id) ?? -1;
    return ['providers', inFile >= 0 ? inFile : index];
  };
  const found: FoundProblem[] = [
    ...(located?.problems.filter((problem) => problem.severity === 'warning') ?? []),
    // Decoded as start decodes them (length, encoding); development keys are generated at start.
    ...secretProblems(config),
    ...config.providers.flatMap((provider, index) =>
      providerWarnings(provider).map((warning) => {
        const [field = '', ...rest] = warning.split(': ');
        return { severity: 'warning' as const, path: [...providerPath(provider.id, index), field], message: rest.join(': ') };
      }),
    ),
  ];
  if (online) {
    // The development IdPs are children of a running Gatehouse: there is nothing to ask before it starts.
    const developmentIdps = new Set(config.development.idps.map((idp) => idp.providerId));
    const unreachable = await unreachableProviders(config.providers.filter((provider) => !developmentIdps.has(provider.id)));
    for (const provider of unreachable) {
      const at = providerPath(provider.id, config.providers.findIndex((candidate) => candidate.id === provider.id));
      found.push({ severity: 'warning', path: located?.has([...at, 'issuer']) ? [...at, 'issuer'] : at, message: unreachableMessage(provider) });
    }
  }
  const problems: ConfigProblem[] = placeProblems(found, located).map((problem) => (strict && problem.severity === 'warning' ? { ...problem, severity: 'error' } : problem));
  const report = renderProblems(problems, located?.name);
  if (problems.some((problem) => problem.severity === 'error')) {
    console.error([...report, `Invalid configuration (${name}): ${countProblems(problems)}${strict ? ' (--strict: warnings count as errors)' : ''}.`].join('\n'));
    return 2;
  }
  console.log(
    [
      ...report,
      `Configuration OK (${name}): ${config.mode} mode, ${config.providers.length} provider(s), public URL ${config.publicUrl}, database ${describeDatabase(config)}` +
        `${problems.length > 0 ? `; ${countProblems(problems)}` : ''}.`,
    ].join('\n'),
  );
  return 0;
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

async function start({ config, file }: LoadedConfig): Promise<number> {
  // Before the heap grows: see tickObjectShape.ts (a steady per-request cost on Node 20).
  keepTickObjectShape();
  const log = pino(loggerOptions(config));
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
    services = await createServices(config, log, { node: cluster.isWorker ? process.env.GATEHOUSE_NODE_ID : undefined, file });
    // Every change this worker makes reaches its siblings at once, and theirs reach it
    // (storage/clusterChanges.ts); the other nodes' come through PostgreSQL (storage/pgChanges.ts).
    if (cluster.isWorker) services.changes.attach(workerChangeTransport(process, { log }));
  } catch (error) {
    return failedToStart(error, log, devServices);
  }
  const ready = services;
  // The metrics listener's /readyz is the primary's; the report is this worker's (http/clusterReadiness.ts).
  if (cluster.isWorker) answerReadinessQuestions(() => readinessReport(ready));

  const reloadHere = cluster.isWorker ? workerReload(services, log) : localReload(services, readConfigFrom(file), log);
  const app = await buildApp(services, { loggerInstance: log, reload: reloadHere });
  const metricsListener = cluster.isWorker ? undefined : await startMetrics(config, services.metricsRegistry?.registry, log, () => readinessReport(ready));
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
  const purge = setInterval(
    () =>
      void Promise.all([services.attempts.purgeExpired(), purgeLogoutTokenJtis(services.database.db)]).catch((error: unknown) =>
        log.warn({ err: error }, 'purge failed'),
      ),
    60_000,
  );
  purge.unref();

  if (cluster.isWorker) process.send?.({ gatehouseReady: true });
  else log.info(`Gatehouse is ready: open ${config.publicUrl}`);
  if (metricsListener) log.info(`Metrics for Prometheus: ${metricsListener.url}`);

  const reason = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    // A worker is told to stop by its primary (Ctrl-C also reaches it directly, as its process group's).
    process.on('message', (message) => {
      if ((message as { gatehouseStop?: boolean } | null)?.gatehouseStop) resolve('the primary stopping');
    });
    // The primary is gone (killed): a worker does not go on serving alone, unsupervised.
    if (cluster.isWorker) process.once('disconnect', () => resolve('the primary went away'));
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
  // SIGHUP: the file is read once here, and every worker applies that reading (reload.ts).
  const reload = primaryReload(cluster, readConfigFrom(file), log, { config, file });
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
      await new SigningKeys(database.db, createTokenCipher(secrets)).load();
    } finally {
      await database.close();
    }
  } catch (error) {
    return failedToStart(error, log, devServices);
  }

  relayChangesBetweenWorkers(cluster, log);
  const nodeId = randomUUID();
  countLimitsForWorkers(cluster);
  let stopping = false;
  let restartDelay = 1_000;
  const fork = () => {
    // The workers share one node id: they ignore each other's notifications, which reach them over IPC.
    const worker = cluster.fork({ GATEHOUSE_NODE_ID: nodeId });
    worker.on('message', (message: { gatehouseReady?: boolean } | null) => {
      if (!message?.gatehouseReady) return;
      restartDelay = 1_000;
      if (++ready === count) log.info(`Gatehouse is ready with ${count} workers: open ${config.publicUrl}`);
    });
  };
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping) return;
    log.error({ worker: worker.process.pid, code, signal }, `a worker stopped unexpectedly; starting another in ${restartDelay / 1000} s`);
    setTimeout(fork, restartDelay).unref();
    restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
  });
  for (let index = 0; index < count; index++) fork();
  // The workers record; this process gathers their registries at each scrape and serves the sum.
  const metricsListener = await startMetrics(config, config.metrics ? clusterRegistry() : undefined, log, workersReadiness(cluster));
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
          if (worker.isConnected()) worker.send({ gatehouseStop: true });
        }),
    ),
  );
  await devServices?.stop();
  log.flush();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // A worker's channel to its primary would keep it running after it has stopped.
    if (cluster.isWorker) process.disconnect();
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
