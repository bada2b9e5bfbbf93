import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router/dom';
import { AppProvider } from './app/provider';
import { createRouter } from './app/router';
import { sessionQueryKey } from './features/auth/api/getSession';
import { createQueryClient } from './lib/queryClient';

const queryClient = createQueryClient({
  // Another request found the session gone: re-check it, and RequireSession takes the person to sign in.
  // Not when the session check itself said 401 (that is the answer already, and would only loop).
  onUnauthenticated: (queryKey) => {
    if (queryKey?.[0] === sessionQueryKey[0]) return;
    void queryClient.invalidateQueries({ queryKey: sessionQueryKey });
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
