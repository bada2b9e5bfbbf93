import { Center, Loader, VisuallyHidden } from '@mantine/core';

/** Placeholder while a page's data or code loads; announced once to screen readers. */
export function PageLoader({ label = 'Loading…' }: { label?: string }) {
  return (
    <Center py="xl" role="status">
      <Loader size="md" aria-hidden />
      <VisuallyHidden>{label}</VisuallyHidden>
    </Center>
  );
}
