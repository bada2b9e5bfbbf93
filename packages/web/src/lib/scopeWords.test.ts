import { describe, expect, it } from 'vitest';
import { scopeWords, scopeWordsAbout } from './scopeWords';

describe('scopeWords', () => {
  it('says what the app may know, in the person’s words', () => {
    expect(scopeWords(['openid', 'profile', 'email', 'groups'])).toBe('your name, email address and groups');
    expect(scopeWords(['openid', 'email'])).toBe('your email address');
    expect(scopeWords(['openid', 'profile', 'email'])).toBe('your name and email address');
  });

  it('keeps one order whatever order the scopes were granted in, and says each once', () => {
    expect(scopeWords(['groups', 'email', 'openid', 'profile', 'email'])).toBe('your name, email address and groups');
  });

  it('says “only who you are” when the app gets nothing about the person', () => {
    expect(scopeWords(['openid'])).toBe('only who you are');
    expect(scopeWords([])).toBe('only who you are');
  });

  it('says that an app with offline access keeps it while the person is away', () => {
    expect(scopeWords(['openid', 'email', 'offline_access'])).toBe('your email address, also while you are away');
    expect(scopeWords(['openid', 'offline_access'])).toBe('only who you are, also while you are away');
  });

  // Threat: a grant that lets an app see more than the page says. A scope this version has no words
  // for is shown as it is, never left out.
  it('shows a scope it does not know as it is', () => {
    expect(scopeWords(['openid', 'email', 'payroll:read'])).toBe('your email address and “payroll:read”');
  });

  it('speaks of someone else in the console', () => {
    expect(scopeWordsAbout(['openid', 'profile', 'groups', 'offline_access'])).toBe('their name and groups, also while they are away');
    expect(scopeWordsAbout(['openid'])).toBe('only who they are');
  });
});
