import { useState, type FormEvent } from 'react';

/** The keys of `V` whose values are `T` (the text fields of a form's values, or its switches). */
type KeysWith<V, T> = { [K in keyof V]-?: V[K] extends T ? K : never }[keyof V];

/**
 * Binds a form's inputs to one values object: `text(key)` for TextInput, Textarea and PasswordInput,
 * `toggle(key)` for Switch and Checkbox, `set(key, value)` for anything else (a Select, a rule list).
 * Every change hands the whole next values object to `onChange`, which may be a `useState` setter or
 * a parent's handler when the parent owns the values.
 */
export function formFields<V extends object>(values: V, onChange: (next: V) => void) {
  const set = <K extends keyof V>(key: K, value: V[K]) => onChange({ ...values, [key]: value });
  const text = <K extends KeysWith<V, string>>(key: K) => ({
    value: values[key] as string,
    onChange: (event: { currentTarget: { value: string } }) => set(key, event.currentTarget.value as V[K]),
  });
  const toggle = <K extends KeysWith<V, boolean>>(key: K) => ({
    checked: values[key] as boolean,
    onChange: (event: { currentTarget: { checked: boolean } }) => set(key, event.currentTarget.checked as V[K]),
  });
  return { set, text, toggle };
}

export interface CheckedSubmitOptions<T> {
  /** Read-only (or not ready): submitting does nothing. */
  disabled: boolean;
  /** The form's values as the definition to save, and what is wrong with them before asking the server. */
  check: () => { value: T; problems: string[] };
  onSubmit: (value: T) => void;
}

/**
 * Submitting a form that checks itself first: the problems it finds are kept (and cleared by the
 * next submit), and only a form without problems is handed on.
 */
export function useCheckedSubmit<T>({ disabled, check, onSubmit }: CheckedSubmitOptions<T>) {
  const [problems, setProblems] = useState<string[]>([]);
  // Counts submits, so a form can react to each one (focus the first problem again) even when the problems are the same.
  const [attempt, setAttempt] = useState(0);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (disabled) return;
    const checked = check();
    setProblems(checked.problems);
    setAttempt((count) => count + 1);
    if (checked.problems.length === 0) onSubmit(checked.value);
  };
  return { problems, submit, attempt };
}
