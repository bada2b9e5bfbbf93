import type { LoadedConfig } from '../config/load.js';
import { countProblems, placeProblems, renderProblems, type ConfigPath, type ConfigProblem, type FoundProblem } from '../config/problems.js';
import { providerWarnings } from '../config/schema.js';
import { unreachableMessage, unreachableProviders } from '../providers/reachability.js';
import { secretProblems } from '../secrets.js';
import { describeDatabase } from '../storage/database.js';

/**
 * `check-config` once the file is valid: what start would still refuse (the keys' encoding), the
 * warnings (trust settings, and with `--online` each IdP that does not answer), each at its place in
 * the file; then one line that sums it up. Exit 2 on any error (or warning, with `--strict`), else 0.
 */
export async function checkConfig({ config, file, located }: LoadedConfig, { online, strict }: { online: boolean; strict: boolean }): Promise<number> {
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
