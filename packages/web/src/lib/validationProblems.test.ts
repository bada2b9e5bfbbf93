import { describe, expect, it } from 'vitest';
import { ApiError, toProblem } from './apiClient';
import { conflictOn, fieldProblems } from './validationProblems';

const conflict = (field: string, detail: string) =>
  new ApiError(toProblem(409, { type: 'urn:gatehouse:error:conflict', title: 'Already in use', status: 409, detail, code: 'conflict', reference: 'abc', field }));

describe('fieldProblems', () => {
  it('lists a 400 problem by problem', () => {
    const invalid = new ApiError(toProblem(400, { status: 400, title: 'Bad request', code: 'bad_request', detail: 'The request could not be understood: name: Too small; upstream: must be an absolute http(s) URL.' }));
    expect(fieldProblems(invalid)).toEqual(['name: Too small', 'upstream: must be an absolute http(s) URL']);
  });

  it('puts a taken id or host (409 conflict) on the field the server names', () => {
    expect(fieldProblems(conflict('publicUrl', 'Another app ("wiki") already uses wiki.example.com. Choose another.'))).toEqual([
      'publicUrl: Another app ("wiki") already uses wiki.example.com. Choose another.',
    ]);
  });

  it('has nothing to place for other failures, which are shown whole', () => {
    expect(fieldProblems(new ApiError(toProblem(409, { status: 409, title: 'Set in the configuration', code: 'app_from_config', detail: 'This app is defined in the configuration file; change it there.' })))).toEqual([]);
    expect(fieldProblems(new ApiError(toProblem(409, { status: 409, title: 'Already in use', code: 'conflict', detail: 'Taken.' })))).toEqual([]);
    expect(fieldProblems(new ApiError(toProblem(502, undefined)))).toEqual([]);
    expect(fieldProblems(new Error('network'))).toEqual([]);
  });
});

describe('conflictOn', () => {
  it('is the sentence of a conflict on that field only', () => {
    const taken = conflict('id', 'Another provider already has the id "corp". Choose another.');
    expect(conflictOn(taken, 'id')).toBe('Another provider already has the id "corp". Choose another.');
    expect(conflictOn(taken, 'publicUrl')).toBeUndefined();
    expect(conflictOn(new ApiError(toProblem(400, { code: 'bad_request', detail: 'The request could not be understood: id: must be lowercase.' })), 'id')).toBeUndefined();
  });
});
