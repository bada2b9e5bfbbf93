import { ONLINE_CHECK_TIMEOUT_MS } from '../providers/reachability.js';

/** What `gatehouse --help` prints, and what a wrong command or argument is answered with. */
export const USAGE = `Usage: gatehouse [command] [--config <file>]

Commands:
  start          run Gatehouse (default)
  check-config [--online] [--strict]
                 validate the configuration and exit: every problem at once, each at its line and
                 column (exit 2 when there is one). --online also asks every enabled provider's IdP
                 for its discovery document (${ONLINE_CHECK_TIMEOUT_MS / 1000} s each, all at once) and warns about
                 those that do not answer; --strict makes every warning an error.
  migrate        bring the database schema up to date and exit
  rotate-signing-key [--id-token-key-delay <duration>]
                 make a new key sign identity assertions; the old one stays published in
                 /.gatehouse/jwks.json for 24 hours so assertions in flight still verify.
                 The ID token keys get next keys: published at /oidc/jwks now, signing in an hour
                 or after --id-token-key-delay (e.g. 10m; 0s signs at once, before apps that cache
                 the key set have it) (on PostgreSQL the running nodes switch at once; on SQLite,
                 restart Gatehouse)
  copy-database --from <sqlite:file | postgres://…> --to <postgres://… | sqlite:file>
                 copy every table of one Gatehouse database into a new, empty one (e.g. from
                 SQLite to PostgreSQL); sessions stay signed in when the new nodes use the same
                 secrets. Stop Gatehouse first. Put the password in PGPASSWORD, not the URL.

The configuration file is --config, else $GATEHOUSE_CONFIG, else ./gatehouse.yaml if it exists,
else the built-in development defaults.`;
