import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { discoveryUrl, oidcRecipes } from './oidcRecipes';

const facts = { issuer: 'https://gatehouse.example.com', clientId: 'grafana', appUrl: 'https://grafana.example.com' };
const recipe = (app: string) => oidcRecipes(facts).find((candidate) => candidate.app === app)!;

describe('the OpenID Connect recipes of an app', () => {
  it('fill the shipped files with the issuer, the client id and the app’s URL, leaving the secret for the operator', () => {
    const grafana = recipe('Grafana').text;
    expect(grafana).toContain('client_id = grafana');
    expect(grafana).toContain('auth_url = https://gatehouse.example.com/oidc/authorize');
    expect(grafana).toContain('token_url = https://gatehouse.example.com/oidc/token');
    expect(grafana).toContain('api_url = https://gatehouse.example.com/oidc/userinfo');
    expect(grafana).toContain('client_secret = CLIENT_SECRET');
    expect(grafana).toContain('post_logout_redirect_uri=https://grafana.example.com/login');
    expect(recipe('Gitea').text).toContain('--auto-discover-url https://gatehouse.example.com/.well-known/openid-configuration');
    expect(recipe('Nextcloud').text).toContain('--discoveryuri="https://gatehouse.example.com/.well-known/openid-configuration"');
    expect(recipe('Argo CD').text).toContain('issuer: https://gatehouse.example.com\n');
    const apache = recipe('Apache').text;
    expect(apache).toContain('OIDCProviderMetadataURL https://gatehouse.example.com/.well-known/openid-configuration');
    expect(apache).toContain('OIDCRedirectURI https://grafana.example.com/redirect_uri');
    expect(apache).toContain('OIDCPKCEMethod S256');
    expect(recipe('Apache').uris.backchannelLogoutUri).toBe('https://grafana.example.com/redirect_uri?logout=backchannel');
    // Nothing but the operator's own values is left as a placeholder; the files' header comments are gone.
    for (const { app, text, unfilled } of oidcRecipes(facts)) {
      expect(text, app).not.toMatch(/\b(ISSUER|CLIENT_ID|APP_URL)\b/);
      expect(text.startsWith('#'), app).toBe(false);
      for (const placeholder of unfilled) expect(text, app).toMatch(new RegExp(`\\b${placeholder}\\b`));
    }
  });

  it('name the guide of each, which shows every line of the same file (the guide cannot drift from what the console fills in)', () => {
    const read = (path: string) => readFileSync(new URL(`../../../../../../${path}`, import.meta.url), 'utf8');
    for (const { guide, file } of oidcRecipes(facts)) {
      const text = read(guide);
      expect(text).toMatch(/^# /);
      for (const line of read(file).split('\n').filter((candidate) => candidate.trim() && !candidate.startsWith('#'))) expect(text, `${guide}: ${line}`).toContain(line);
    }
    expect(discoveryUrl('https://gatehouse.example.com')).toBe('https://gatehouse.example.com/.well-known/openid-configuration');
  });
});
