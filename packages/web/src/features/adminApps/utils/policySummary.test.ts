import { describe, expect, it } from 'vitest';
import { validationProblems } from '../../../lib/validationProblems';
import { describeDecision, describeRule, summarizePolicy } from './policySummary';

describe('describeRule', () => {
  it('names each kind of rule as the server does', () => {
    expect(describeRule({ anyUser: true })).toBe('any signed-in user');
    expect(describeRule({ groups: ['staff', 'ops'] })).toBe('groups staff, ops');
    expect(describeRule({ emails: ['a@example.com'] })).toBe('emails a@example.com');
    expect(describeRule({ domains: ['example.com'] })).toBe('domains example.com');
    expect(describeRule({ roles: ['admin'] })).toBe('roles admin');
    expect(describeRule({ claim: { name: 'dept', value: 'eng' } })).toBe('claim dept = eng');
  });
});

describe('summarizePolicy', () => {
  it('sums up allow and deny rules', () => {
    expect(summarizePolicy({ allow: [{ groups: ['staff'] }], deny: [{ emails: ['x'] }] })).toBe('Allow: groups staff · Deny: emails x');
    expect(summarizePolicy({ allow: [{ groups: ['staff'] }, { anyUser: true }], deny: [] })).toBe(
      'Allow: groups staff; any signed-in user',
    );
  });

  it('says nobody gets in without allow rules', () => {
    expect(summarizePolicy({ allow: [], deny: [] })).toBe('Allow: nobody');
    expect(summarizePolicy(undefined)).toBe('Allow: nobody');
  });
});

describe('validationProblems', () => {
  it('splits the server detail into one problem per field', () => {
    expect(
      validationProblems('The request could not be understood: policy.allow[0].roles[0]: must be one of: admin; name: Too small.'),
    ).toEqual(['policy.allow[0].roles[0]: must be one of: admin', 'name: Too small']);
  });

  it('keeps any other text whole', () => {
    expect(validationProblems('This app is defined in the configuration file; change it there.')).toEqual([
      'This app is defined in the configuration file; change it there.',
    ]);
    expect(validationProblems(undefined)).toEqual([]);
  });
});

describe('describeDecision', () => {
  it('names the deciding rule as the form numbers it', () => {
    expect(describeDecision({ allow: true, decidedBy: { list: 'allow', index: 0, rule: { groups: ['staff', 'ops'] } } })).toBe(
      'Allowed by allow rule 1: groups staff, ops.',
    );
    expect(describeDecision({ allow: false, decidedBy: { list: 'deny', index: 2, rule: { emails: ['x@example.com'] } } })).toBe(
      'Denied by deny rule 3: emails x@example.com.',
    );
    expect(describeDecision({ allow: false, decidedBy: null })).toBe('Denied: no allow rule matched.');
  });
});
