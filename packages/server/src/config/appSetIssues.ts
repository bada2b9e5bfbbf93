/**
 * Rules a set of apps must keep together (in the config file, and with the console's apps added):
 * unique ids, one guarded app per host, never the portal's host, the portal's scheme for a guarded app
 * (cookies and the handshake depend on it), and one app per OpenID Connect client id. Returns each
 * problem with the index of the app it concerns.
 *
 * An app Gatehouse does not guard (`guard: false`, OpenID Connect alone) answers on no host of
 * Gatehouse's: it may share its host with another app, and its scheme is its own.
 */
export interface AppSetIssue {
  index: number;
  field: 'id' | 'publicUrl' | 'oidc.clientId';
  message: string;
  /** The id, the host or the client id is another app's: the console answers 409 `conflict` for it, not 400. */
  conflict: boolean;
}

/** The words for an id already taken (also when the database finds it, in a race the set check missed). */
export function duplicateAppId(id: string): string {
  return `duplicate app id "${id}"`;
}

/** The words for a client id another app signs in with. */
export function duplicateClientId(clientId: string, holder: string): string {
  return `the OpenID Connect client id "${clientId}" is the app "${holder}"'s already`;
}

interface SetMember {
  id: string;
  publicUrl: string;
  guard?: boolean | undefined;
  oidc?: { clientId?: string | undefined } | undefined;
}

export function appSetIssues(portalUrl: string, apps: readonly SetMember[]): AppSetIssue[] {
  // URLs that do not parse are reported by the schema itself; nothing to compare them with here.
  if (!URL.canParse(portalUrl)) return [];
  const portal = new URL(portalUrl);
  const ids = new Set<string>();
  const hosts = new Set<string>();
  const clientIds = new Map<string, string>();
  const issues: AppSetIssue[] = [];
  apps.forEach((app, index) => {
    // A client id is compared whatever the URL: an app found by it must be one app.
    if (app.oidc) {
      const clientId = app.oidc.clientId ?? app.id;
      const holder = clientIds.get(clientId);
      if (holder !== undefined) issues.push({ index, field: 'oidc.clientId', message: duplicateClientId(clientId, holder), conflict: true });
      else clientIds.set(clientId, app.id);
    }
    if (!URL.canParse(app.publicUrl)) return;
    const url = new URL(app.publicUrl);
    const guarded = app.guard !== false;
    if (ids.has(app.id)) issues.push({ index, field: 'id', message: duplicateAppId(app.id), conflict: true });
    if (guarded && hosts.has(url.host)) issues.push({ index, field: 'publicUrl', message: `another app already uses ${url.host}`, conflict: true });
    if (url.host === portal.host) issues.push({ index, field: 'publicUrl', message: 'must differ from the portal’s publicUrl', conflict: false });
    if (guarded && url.protocol !== portal.protocol) issues.push({ index, field: 'publicUrl', message: 'must use the same scheme as the portal', conflict: false });
    ids.add(app.id);
    if (guarded) hosts.add(url.host);
  });
  return issues;
}
