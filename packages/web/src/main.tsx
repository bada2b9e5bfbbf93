import type { QueryClient } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router/dom';
import { AppProvider } from './app/provider';
import { createRouter } from './app/router';
import { sessionQueryKey } from './features/auth/api/getSession';
import { createQueryClient, dropSessionOnUnauthenticated } from './lib/queryClient';

const queryClient: QueryClient = createQueryClient({
  // Any 401 drops the cached session, so no page keeps showing someone signed in whose session ended.
  onUnauthenticated: dropSessionOnUnauthenticated(() => queryClient, sessionQueryKey),
});
const router = createRouter(queryClient);

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

createRoot(container).render(
  <StrictMode>
    <AppProvider queryClient={queryClient}>
      <RouterProvider router={router} />
    </AppProvider>
  </StrictMode>,
);
