import '@mantine/core/styles.css';
import { MantineProvider } from '@mantine/core';
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { cssVariablesResolver, theme } from './theme';

export interface AppProviderProps {
  queryClient: QueryClient;
  children: ReactNode;
}

/**
 * Everything the whole app shares. The colour scheme follows the OS ("auto"); there is no toggle yet,
 * and no ColorSchemeScript either, since it is an inline script and the CSP only allows 'self'
 * (index.html's `<meta name="color-scheme">` keeps the first paint from flashing instead).
 */
export function AppProvider({ queryClient, children }: AppProviderProps) {
  return (
    <MantineProvider theme={theme} cssVariablesResolver={cssVariablesResolver} defaultColorScheme="auto">
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </MantineProvider>
  );
}
