#!/usr/bin/env node
// First: an unsupported Node.js is told so before anything else loads.
import './cli/nodeVersion.js';
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { checkConfig } from './cli/checkConfig.js';
import { copyDatabaseCommand } from './cli/copyDatabase.js';
import { migrate } from './cli/migrate.js';
import { rotateSigningKey } from './cli/rotateSigningKey.js';
import { start, startWorker } from './cli/start.js';
import { USAGE } from './cli/usage.js';
import { ConfigError, loadConfig, type LoadedConfig } from './config/load.js';
import { countProblems, renderProblems } from './config/problems.js';

/** The command line: which command (cli/, one file each), with the configuration it names. */
async function main(argv: string[]): Promise<number> {
  // A worker of several takes no arguments of its own: its primary hands it the configuration in force.
  if (cluster.isWorker) return startWorker();
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
      'id-token-key-delay': { type: 'string' },
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

  switch (command) {
    case 'check-config':
      return checkConfig(loaded, { online: values.online === true, strict: values.strict === true });
    case 'rotate-signing-key':
      return rotateSigningKey(loaded.config, { idTokenKeyDelay: values['id-token-key-delay'] });
    case 'migrate':
      return migrate(loaded.config);
    case 'copy-database':
      return copyDatabaseCommand(loaded.config, { from: values.from, to: values.to });
    default:
      return start(loaded);
  }
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
