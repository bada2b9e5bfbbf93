import { z } from 'zod';
import { configStateSchema } from '../api/operations.js';
import { defineRoute } from '../route.js';

const entryChanges = z.object({ added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.string()) });

/** What a reload changed: ids of providers and apps, admins (an email, or `<group> from <provider>`), other settings by path. */
export const configChangesSchema = z.object({
  providers: entryChanges,
  apps: entryChanges,
  admins: z.object({ added: z.array(z.string()), removed: z.array(z.string()) }),
  /** Every other setting that changed, by path (`session.idleTimeout`, `log.level`); never a value. */
  settings: z.array(z.string()),
});
export type ConfigChanges = z.output<typeof configChangesSchema>;

export const configReloadSchema = z.object({
  /**
   * `applied`: in force from the next request on; `unchanged`: what was read is what is already in
   * force — the file, or, when Gatehouse started without one (`config.file` null), its built-in
   * defaults, which a reload reads again as they were: there is no file to change.
   */
  outcome: z.enum(['applied', 'unchanged']),
  changes: configChangesSchema,
  /** Sessions ended because the provider they signed in with was removed or turned off. */
  sessionsEnded: z.number().int(),
  /**
   * What deserves attention in the configuration now in force, one line each (`providers[1] (corp).issuer:
   * https://sso.example.com did not answer (…)`): its trust warnings, and each of its providers whose IdP
   * did not answer when asked right after the reload. Warnings only: the configuration is in force.
   */
  warnings: z.array(z.string()),
  config: configStateSchema,
});
export type ConfigReload = z.output<typeof configReloadSchema>;

/**
 * `POST /api/admin/config/reload`: reads the configuration file again, validates it whole and applies
 * it at once (providers, apps and their policies, admins, limits, timings), as SIGHUP does, on every
 * worker of this node. Sessions and open connections stay. 422 `config_invalid` when the file is
 * invalid or changes a setting that needs a restart: then nothing of it is applied, and the detail
 * names every problem, each at its place in the file (`gatehouse.yaml:12:5: providers[0].issuer: …`).
 */
export const reloadConfig = defineRoute({
  method: 'POST',
  path: '/api/admin/config/reload',
  access: 'admin',
  tag: 'admin',
  summary: 'Read the configuration file again and apply it without a restart',
  responses: { 200: configReloadSchema },
});

/**
 * `GET /api/admin/config`: where the configuration in force comes from (the file's path as the server
 * read it, or null for the built-in development defaults) and its last reload: how the console names
 * the source of what it shows read-only.
 */
export const getConfig = defineRoute({
  method: 'GET',
  path: '/api/admin/config',
  access: 'admin',
  tag: 'admin',
  summary: 'Where the configuration in force comes from, and its last reload',
  responses: { 200: z.object({ config: configStateSchema }) },
});
