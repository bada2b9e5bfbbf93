import { describe, expect, it } from 'vitest';
import { ApiError, toProblem } from '../../../lib/apiClient';
import { fieldProblems } from '../../../lib/validationProblems';
import { appFormErrors, formProblems, hasAppFormErrors } from './appProblems';
import { emptyAppForm, formToApp, newRule } from './policyForm';

describe('formProblems', () => {
  it('catches an empty id and name on the first submit, with the server’s own schema', () => {
    const problems = formProblems(formToApp({ ...emptyAppForm(), upstream: 'not a url' }));
    const errors = appFormErrors(problems);
    expect(errors.fields.id).toBe('Enter an id.');
    expect(errors.fields.name).toBe('Enter a name.');
    expect(errors.fields.publicUrl).toBe('Enter the public URL.');
    expect(errors.fields.upstream).toBe('Must be an absolute http(s) URL.');
    expect(errors.lists.allow).toBe('Add at least one allow rule: with none, nobody can open the app.');
    expect(errors.other).toEqual([]);
  });

  it('finds nothing wrong with a whole app', () => {
    const form = { ...emptyAppForm(), id: 'wiki', name: 'Wiki', publicUrl: 'https://wiki.example.com', upstream: 'http://10.0.0.5:8080' };
    form.allow = [{ ...newRule('groups'), values: 'staff' }];
    expect(formProblems(formToApp(form))).toEqual([]);
  });
});

describe('appFormErrors', () => {
  it('puts each of the server’s problems beside its field or rule, in words', () => {
    const errors = appFormErrors([
      'id: duplicate app id "wiki"',
      'policy.allow[0].roles[0]: must be one of: admin',
      'policy.deny[1].groups: must list at least one value',
      'publicPaths[2]: must be a plain normalised path',
    ]);
    expect(errors.fields.id).toBe('Another app already has this id. Choose another.');
    expect(errors.rules.allow).toEqual({ 0: 'Roles (value 1): must be one of: admin.' });
    expect(errors.rules.deny).toEqual({ 1: 'Groups: must list at least one value.' });
    expect(errors.fields.publicPaths).toBe('Line 3: must be a plain normalised path.');
    expect(hasAppFormErrors(errors)).toBe(true);
  });

  it('keeps what belongs to no field whole, and raw keys never reach a field', () => {
    const errors = appFormErrors(['(root): Unrecognized key: "extra"', 'The app is not valid']);
    expect(errors.fields).toEqual({});
    expect(errors.other).toEqual(['Unrecognized key: "extra".', 'The app is not valid']);
    expect(hasAppFormErrors(appFormErrors([]))).toBe(false);
  });

  it('puts a taken id (409 conflict) beside the id field, in the server’s words', () => {
    const taken = new ApiError(
      toProblem(409, { type: 'urn:gatehouse:error:conflict', title: 'Already in use', status: 409, detail: 'Another app already has the id "wiki". Choose another.', code: 'conflict', reference: 'abc', field: 'id' }),
    );
    expect(appFormErrors(fieldProblems(taken)).fields).toEqual({ id: 'Another app already has the id "wiki". Choose another.' });
  });

  it('puts OpenID Connect problems beside their fields: a URI by its line, a client id another app has in the server’s words', () => {
    const form = { ...emptyAppForm(), id: 'sso', name: 'SSO', publicUrl: 'https://sso.example.com', guarded: false, signsInWithOidc: true };
    form.allow = [{ ...newRule('anyUser') }];
    form.oidc = { ...form.oidc, redirectUris: 'https://sso.example.com/cb\nhttp://sso.example.com/cb', accessTokenLifetime: 'soon' };
    const errors = appFormErrors(formProblems(formToApp(form)));
    expect(errors.oidc.redirectUris).toBe('Line 2: must use https (plain http only to localhost or 127.0.0.1).');
    expect(errors.oidc.accessTokenLifetime).toBe('"soon" is not a duration such as 90s, 15m, 12h or 7d.');
    expect(errors.other).toEqual([]);
    expect(appFormErrors(formProblems(formToApp({ ...form, oidc: { ...form.oidc, redirectUris: '' } }))).oidc.redirectUris).toBe('Enter at least one redirect URI.');
    const taken = new ApiError(
      toProblem(409, { type: 'urn:gatehouse:error:conflict', title: 'Already in use', status: 409, detail: 'Another app ("grafana") already signs in with the client id "grafana". Choose another.', code: 'conflict', reference: 'abc', field: 'oidc.clientId' }),
    );
    expect(appFormErrors(fieldProblems(taken)).oidc).toEqual({ clientId: 'Another app ("grafana") already signs in with the client id "grafana". Choose another.' });
  });

  it('an app neither guarded nor signing in with OpenID Connect is told so, beside the choice', () => {
    const form = { ...emptyAppForm(), id: 'x', name: 'X', publicUrl: 'https://x.example.com', guarded: false };
    form.allow = [{ ...newRule('anyUser') }];
    expect(appFormErrors(formProblems(formToApp(form))).protection).toBe('An app Gatehouse does not guard must sign people in with OpenID Connect (oidc).');
  });
});
