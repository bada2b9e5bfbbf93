import { notifications } from '@mantine/notifications';

/**
 * A short confirmation that a change was saved ("Saved: Reports"), in the console's corner. Its text in
 * the body colour (Mantine's grey description is under 4.5:1) and its close button named.
 */
export function confirmSaved(title: string, message: string) {
  notifications.show({
    color: 'green',
    title,
    message,
    closeButtonProps: { 'aria-label': 'Dismiss' },
    styles: { description: { color: 'var(--mantine-color-text)' } },
  });
}
