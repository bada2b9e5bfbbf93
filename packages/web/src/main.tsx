import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router/dom';
import { AppProvider } from './app/provider';
import { createRouter } from './app/router';
import { sessionQueryKey } from './features/auth/api/getSession';
import { createQueryClient } from './lib/queryClient';

const queryClient = createQueryClient({
  // Any 401 means the session is over (revoked, expired, its identity unlinked): what the cache holds
  // about it is stale, and no page may go on showing "signed in as …". Resetting drops that data and
  // refetches the session where it is shown, so RequireSession takes the person to sign in.
  // The session check's own 401 resets only while it still holds data, or it would loop.
  onUnauthenticated: (queryKey) => {
    if (queryKey?.[0] === sessionQueryKey[0] && queryClient.getQueryData(sessionQueryKey) === undefined) return;
    void queryClient.resetQueries({ queryKey: sessionQueryKey });
  },
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
