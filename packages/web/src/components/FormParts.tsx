import { Button, Fieldset, Group, Stack, Text, type MantineSpacing } from '@mantine/core';
import { useEffect, useRef, type ReactNode } from 'react';
import { SaveError } from './SaveError';

export interface FormErrorsProps {
  /** "The app could not be saved". */
  title: string;
  /** What the form's own checks found; shown instead of `error` while there are any. */
  problems: string[];
  /** The failed save, if any; a 400's detail is listed field by field. */
  error: unknown;
  /**
   * Bring a new failure into view: for long forms, where the top (where it shows) is far from the
   * button. The alert then sits in a wrapper that stays in the layout when there is none.
   */
  scrollIntoView?: boolean;
}

/** Why a form could not be saved: its own checks' problems, or else the server's answer. */
export function FormErrors({ title, problems, error, scrollIntoView = false }: FormErrorsProps) {
  const ref = useRef<HTMLDivElement>(null);
  const failed = problems.length > 0 || (error !== undefined && error !== null);
  useEffect(() => {
    if (scrollIntoView && failed) ref.current?.scrollIntoView({ block: 'center', behavior: 'smooth' });
  }, [scrollIntoView, failed, problems, error]);
  const alert = problems.length > 0 ? <SaveError title={title} error={undefined} problems={problems} /> : failed && <SaveError title={title} error={error} />;
  return scrollIntoView ? <div ref={ref}>{alert}</div> : alert;
}

/**
 * Fields that can't be changed while `locked` (an item from gatehouse.yaml, or a save under way):
 * a borderless fieldset, so one `disabled` reaches every input in it.
 */
export function LockedFields({ locked, gap = 'md', children }: { locked: boolean; gap?: MantineSpacing; children: ReactNode }) {
  return (
    <Fieldset disabled={locked} variant="unstyled" p={0} m={0}>
      <Stack gap={gap}>{children}</Stack>
    </Fieldset>
  );
}

export interface FormActionsProps {
  /** "Create app", "Save". */
  submitLabel: string;
  /** Read-only forms have nothing to submit: only the other actions show. */
  readOnly?: boolean;
  saving?: boolean;
  /** A reason saving is not possible yet: the button is disabled and the reason shown below it. */
  blocked?: string | undefined;
  /** Beside the submit button ("Cancel", "Delete"). */
  children?: ReactNode;
}

/** The row under a form: its submit button and the page's other actions. */
export function FormActions({ submitLabel, readOnly = false, saving = false, blocked, children }: FormActionsProps) {
  return (
    <>
      <Group gap="sm" mt="lg">
        {!readOnly && (
          <Button type="submit" loading={saving} disabled={Boolean(blocked)}>
            {submitLabel}
          </Button>
        )}
        {children}
      </Group>
      {blocked && !readOnly && (
        <Text size="sm" c="dimmed" mt="xs">
          {blocked}
        </Text>
      )}
    </>
  );
}
