import { oidcEndpoints } from '@gatehouse/contract';
// The very files docs/openid-provider/ ships and its guides explain line by line, bundled as text at
// build time (as the proxy configurations are): what the console shows cannot drift from the guides.
import apacheConf from '../../../../../../docs/openid-provider/apache.conf?raw';
import argocdCm from '../../../../../../docs/openid-provider/argocd-cm.yaml?raw';
import giteaSh from '../../../../../../docs/openid-provider/gitea.sh?raw';
import grafanaIni from '../../../../../../docs/openid-provider/grafana.ini?raw';
import nextcloudSh from '../../../../../../docs/openid-provider/nextcloud.sh?raw';
import { fillTemplate } from './proxySnippets';

/** The placeholder for the client secret: never filled in (the secret is shown once, when it is made). */
export const CLIENT_SECRET = 'CLIENT_SECRET';
/** mod_auth_openidc's own passphrase: the operator's to choose. */
export const PASSPHRASE = 'PASSPHRASE';

/** The part of an app and of Gatehouse a recipe is filled in from. */
export interface OidcRecipeFacts {
  /** The issuer: the portal's origin. */
  issuer: string;
  clientId: string;
  /** The app's own origin (its publicUrl). */
  appUrl: string;
}

/** The addresses an app of this kind uses with Gatehouse, to register in the app's oidc block. */
export interface RecipeUris {
  redirectUri: string;
  postLogoutRedirectUri?: string;
  backchannelLogoutUri?: string;
}

export interface OidcRecipe {
  app: 'Grafana' | 'Gitea' | 'Nextcloud' | 'Argo CD' | 'Apache';
  /** The guide in docs/openid-provider/ that explains every line. */
  guide: string;
  /** The shipped file the text is filled in from. */
  file: string;
  /** Where the text goes. */
  name: string;
  text: string;
  uris: RecipeUris;
  /** Placeholders left for the operator. */
  unfilled: string[];
}

/** Where the discovery document is: the issuer's well-known address. */
export function discoveryUrl(issuer: string): string {
  return `${issuer}${oidcEndpoints.discovery}`;
}

/** Each app's configuration, from the shipped files, with this app's values in it. */
export function oidcRecipes(facts: OidcRecipeFacts): OidcRecipe[] {
  const values = { ISSUER: facts.issuer, CLIENT_ID: facts.clientId, APP_URL: facts.appUrl };
  const app = facts.appUrl;
  return [
    {
      app: 'Grafana',
      guide: 'docs/openid-provider/grafana.md',
      file: 'docs/openid-provider/grafana.ini',
      name: 'The [auth.generic_oauth] section of grafana.ini',
      text: fillTemplate(grafanaIni, values),
      uris: { redirectUri: `${app}/login/generic_oauth`, postLogoutRedirectUri: `${app}/login` },
      unfilled: [CLIENT_SECRET],
    },
    {
      app: 'Gitea',
      guide: 'docs/openid-provider/gitea.md',
      file: 'docs/openid-provider/gitea.sh',
      name: 'A command to run once on the Gitea host',
      text: fillTemplate(giteaSh, values),
      uris: { redirectUri: `${app}/user/oauth2/gatehouse/callback`, postLogoutRedirectUri: `${app}/` },
      unfilled: [CLIENT_SECRET],
    },
    {
      app: 'Nextcloud',
      guide: 'docs/openid-provider/nextcloud.md',
      file: 'docs/openid-provider/nextcloud.sh',
      name: 'Commands to run once in the Nextcloud folder',
      text: fillTemplate(nextcloudSh, values),
      uris: {
        redirectUri: `${app}/index.php/apps/user_oidc/code`,
        postLogoutRedirectUri: `${app}/`,
        backchannelLogoutUri: `${app}/index.php/apps/user_oidc/backchannel-logout/Gatehouse`,
      },
      unfilled: [CLIENT_SECRET],
    },
    {
      app: 'Argo CD',
      guide: 'docs/openid-provider/argocd.md',
      file: 'docs/openid-provider/argocd-cm.yaml',
      name: 'The argocd-cm ConfigMap (the secret goes in argocd-secret)',
      text: fillTemplate(argocdCm, values),
      uris: { redirectUri: `${app}/auth/callback`, postLogoutRedirectUri: `${app}/applications` },
      unfilled: [],
    },
    {
      app: 'Apache',
      guide: 'docs/openid-provider/apache.md',
      file: 'docs/openid-provider/apache.conf',
      name: 'Inside the site’s <VirtualHost> (mod_auth_openidc)',
      text: fillTemplate(apacheConf, values),
      uris: { redirectUri: `${app}/redirect_uri`, postLogoutRedirectUri: `${app}/`, backchannelLogoutUri: `${app}/redirect_uri?logout=backchannel` },
      unfilled: [CLIENT_SECRET, PASSPHRASE],
    },
  ];
}
