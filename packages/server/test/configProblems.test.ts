import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { configSchema } from '../src/config/schema.js';
import { countProblems, knownKeysAt, renderProblems, suggestKey } from '../src/config/problems.js';

/**
 * check-config's report as a compiler gives it (config/problems.ts): every problem of a file at once,
 * each once, at its line and column, with the line as written and a caret; "did you mean" for an
 * unknown key. Real files read by the loader `start`, `check-config` and a reload use.
 */

/** The loader's verdict on a file named gatehouse.yaml in a directory of its own (the working directory). */
function refusal(text: string, env: NodeJS.ProcessEnv = {}): ConfigError {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-problems-'));
  writeFileSync(path.join(dir, 'gatehouse.yaml'), text);
  try {
    loadConfig({ file: 'gatehouse.yaml', env, cwd: dir });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the file was accepted');
}

const SEVERAL_FAULTS = `mode: production
publicUrl: https://login.example.com
trustedProxy: [10.0.0.1]
secrets:
  cookieKey: \${COOKIE_KEY}
  encryptionKeys:
    - id: k1
      key: \${ENCRYPTION_KEY}
providers:
  - id: corp
    name: Corp
    issuer: https://\${IDP_HOST}/realms/\${IDP_HOST}
    clientId: gatehouse
    clientSecret: \${CORP_SECRET}
  - id: partner
    name: Partner
    issuer: http://sso.partner.example
    clientId: gatehouse
    clientSecret: \${PARTNER_SECRET:-partner-secret}
listen:
  port: 70000
`;

describe('check-config: every problem of a file at once', () => {
  it('a file with missing variables, a typo and bad values: each problem once, at its line and column, in the order of the file', () => {
    const error = refusal(SEVERAL_FAULTS);
    expect(error.problems).toEqual([
      'gatehouse.yaml:3:1: trustedProxy: unknown key (did you mean trustedProxies?)',
      'gatehouse.yaml:5:14: secrets.cookieKey: environment variable COOKIE_KEY is not set',
      'gatehouse.yaml:8:12: secrets.encryptionKeys[0].key: environment variable ENCRYPTION_KEY is not set',
      // IDP_HOST is named twice in one value: one problem. The issuer is not judged further while it
      // cannot be read (no "must be an absolute URL" beside it).
      'gatehouse.yaml:12:21: providers[0].issuer: environment variable IDP_HOST is not set',
      'gatehouse.yaml:14:19: providers[0].clientSecret: environment variable CORP_SECRET is not set',
      'gatehouse.yaml:17:13: providers[1].issuer: must be https (plain http is accepted only for loopback development IdPs)',
      'gatehouse.yaml:21:9: listen.port: Too big: expected number to be <=65535',
    ]);
    expect(countProblems(error.found)).toBe('7 errors');
  });

  it('prints each problem with the line as written and a caret under the spot, as a compiler does', () => {
    const error = refusal(SEVERAL_FAULTS);
    expect(renderProblems(error.found.slice(0, 4), error.fileName).join('\n')).toBe(
      [
        'gatehouse.yaml:3:1: trustedProxy: unknown key (did you mean trustedProxies?)',
        '  3 | trustedProxy: [10.0.0.1]',
        '    | ^~~~~~~~~~~~',
        'gatehouse.yaml:5:14: secrets.cookieKey: environment variable COOKIE_KEY is not set',
        '  5 |   cookieKey: ${COOKIE_KEY}',
        '    |              ^~~~~~~~~~~~~',
        'gatehouse.yaml:8:12: secrets.encryptionKeys[0].key: environment variable ENCRYPTION_KEY is not set',
        '  8 |       key: ${ENCRYPTION_KEY}',
        '    |            ^~~~~~~~~~~~~~~~~',
        'gatehouse.yaml:12:21: providers[0].issuer: environment variable IDP_HOST is not set',
        ' 12 |     issuer: https://${IDP_HOST}/realms/${IDP_HOST}',
        '    |                     ^~~~~~~~~~~',
      ].join('\n'),
    );
  });

  it('once the variables are set, the rest is what remains: nothing was hidden behind them', () => {
    const error = refusal(SEVERAL_FAULTS, { COOKIE_KEY: 'k', ENCRYPTION_KEY: 'k', IDP_HOST: 'sso.example.com', CORP_SECRET: 's' });
    expect(error.problems).toEqual([
      'gatehouse.yaml:3:1: trustedProxy: unknown key (did you mean trustedProxies?)',
      'gatehouse.yaml:17:13: providers[1].issuer: must be https (plain http is accepted only for loopback development IdPs)',
      'gatehouse.yaml:21:9: listen.port: Too big: expected number to be <=65535',
    ]);
  });

  it('a YAML syntax error: its line and column and the line itself, no dangling colon, and no guesses about what follows', () => {
    const error = refusal(`publicUrl: https://login.example.com
providers:
  - id: corp
    name: Corp
   issuer: https://sso.example.com
listen: { port: 70000 }
`);
    expect(error.problems).toEqual(['gatehouse.yaml:5:1: Sequence item without - indicator']);
    expect(renderProblems(error.found, error.fileName)).toEqual(['gatehouse.yaml:5:1: Sequence item without - indicator', ' 5 |    issuer: https://sso.example.com', '   | ^']);
  });

  // Threat: a file that does not parse has no structure to say which value is a secret; its quoted
  // line must not show one all the same.
  it('a syntax error on the line of a secret: the value masked there too', async () => {
    const error = refusal('providers:\n  - id: corp\n    clientSecret: s3cr3t-in-the-file: more\n');
    expect(renderProblems(error.found, error.fileName)).toEqual(['gatehouse.yaml:3:19: Nested mappings are not allowed in compact mappings', ' 3 |     clientSecret: ***', '   |                   ^~~']);
  });

  it('a key written twice is reported at the second, with the rest of the file checked too', () => {
    const error = refusal(`organization:
  name: Acme
listen: { port: "4180" }
organization:
  name: Acme Corp
`);
    expect(error.problems).toEqual([
      'gatehouse.yaml:3:17: listen.port: Invalid input: expected number, received string',
      'gatehouse.yaml:4:1: Map keys must be unique',
    ]);
  });

  it('a key left out is required at the entry that lacks it; a required key written with a typo is one problem, the typo', () => {
    const error = refusal(`providers:
  - id: corp
    name: Corp
    isuer: https://sso.example.com
    clientSecret: s
apps:
  - id: echo
    name: Echo
    publicUrl: http://echo.localhost:4180
    upstrem: http://127.0.0.1:9000
    policy: { allow: [{ anyUser: true }] }
`);
    expect(error.problems).toEqual([
      'gatehouse.yaml:2:5: providers[0].clientId: is required',
      'gatehouse.yaml:4:5: providers[0].isuer: unknown key (did you mean issuer?)',
      'gatehouse.yaml:10:5: apps[0].upstrem: unknown key (did you mean upstream?)',
    ]);
  });

  it('a value the environment overrides is the variable’s problem, not the file’s line', () => {
    const error = refusal('mode: development\n', { GATEHOUSE_MODE: 'staging' });
    expect(error.problems).toEqual(['mode: Invalid option: expected one of "development"|"production" (from the environment variable GATEHOUSE_MODE)']);
  });

  // Threat: check-config's output kept in a CI log shows a secret written in the file (a client secret
  // under a misspelt key, a database password in its URL), or the value a ${NAME} stands for.
  it('never shows a secret value in a quoted line: masked, and a ${NAME} shown as written', () => {
    const error = refusal(
      `database: { url: "postgres://gatehouse:hunter2@db.internal/gatehouse", pool: { max: 0 } }
providers:
  - id: corp
    name: Corp
    issuer: https://sso.example.com
    clientId: gatehouse
    clientScret: pa55word-in-the-file
  - { id: partner, name: Partner, issuer: "http://partner.example", clientId: gatehouse, clientSecret: s3cr3t-in-the-file }
secrets: { cookieKey: "\${COOKIE_KEY}", encryptionKeys: [] }
apps:
  - { id: wiki, name: Wiki, publicUrl: "http://wiki.localhost:4180", upstream: "http://svc:upstream-pw@10.0.0.2:8080/?x=1", policy: { allow: [{ anyUser: true }] } }
`,
      { COOKIE_KEY: 'value-from-the-environment' },
    );
    const printed = renderProblems(error.found, error.fileName).join('\n');
    expect(printed).toContain(' 1 | database: { url: ***, pool: { max: 0 } }');
    // The caret still sits under the bad value, after the masked URL.
    expect(printed).toContain(`   | ${' '.repeat('database: { url: ***, pool: { max: '.length)}^\n`);
    // The misspelt key is the one problem: not also "clientSecret: is required" beside it.
    expect(printed).not.toContain('providers[0].clientSecret');
    expect(printed).toContain('gatehouse.yaml:7:5: providers[0].clientScret: unknown key (did you mean clientSecret?)');
    expect(printed).toContain(' 7 |     clientScret: ***');
    expect(printed).toContain(' 8 |   - { id: partner, name: Partner, issuer: "http://partner.example", clientId: gatehouse, clientSecret: *** }');
    expect(printed).toContain(' 9 | secrets: { cookieKey: "${COOKIE_KEY}", encryptionKeys: [] }');
    // A password in any URL: the password alone.
    expect(printed).toContain('upstream: "http://svc:***@10.0.0.2:8080/?x=1"');
    for (const secret of ['hunter2', 'pa55word', 's3cr3t', 'value-from-the-environment', 'upstream-pw']) expect(printed + error.message).not.toContain(secret);
  });
});

describe('did you mean', () => {
  it('suggests the known key within about 40 % of the unknown one’s length, case aside, or nothing', () => {
    const known = ['trustedProxies', 'providers', 'publicUrl', 'listen'];
    expect(suggestKey('trustedProxy', known)).toBe('trustedProxies');
    expect(suggestKey('TrustedProxies', known)).toBe('trustedProxies');
    expect(suggestKey('provider', known)).toBe('providers');
    expect(suggestKey('publicURL', known)).toBe('publicUrl');
    expect(suggestKey('x', known)).toBeUndefined();
    expect(suggestKey('database', known)).toBeUndefined();
  });

  it('knows the keys of the entry at hand: a provider’s by its kind, an app’s, a section’s', () => {
    const providers = [{ id: 'g', kind: 'google' }, { id: 'corp' }, { id: 'e', kind: 'entra' }];
    expect(knownKeysAt(configSchema, { providers }, ['providers', 0])).toContain('hostedDomains');
    // An entry without `kind` is OpenID Connect's: Entra ID's `tenant` is not one of its keys.
    expect(knownKeysAt(configSchema, { providers }, ['providers', 1])).toContain('issuer');
    expect(knownKeysAt(configSchema, { providers }, ['providers', 1])).not.toContain('tenant');
    expect(knownKeysAt(configSchema, { providers }, ['providers', 2])).toContain('tenant');
    expect(knownKeysAt(configSchema, { apps: [{}] }, ['apps', 0])).toContain('upstream');
    expect(knownKeysAt(configSchema, { development: { demoApp: {} } }, ['development', 'demoApp'])).toEqual(['port']);
    expect(knownKeysAt(configSchema, {}, [])).toContain('trustedProxies');
  });
});
