import { pages } from '@gatehouse/contract';
import type { QueryClient } from '@tanstack/react-query';
import { createBrowserRouter, type RouteObject } from 'react-router';
import { PageLoader } from '../components/PageLoader';
import { RootLayout, type RouteHandle } from './RootLayout';
import { RouteErrorBoundary } from './RouteErrorBoundary';
import { toLazyRoute } from './routes/routeModule';

/**
 * The client routes. The server must answer each of these paths with index.html (status 200), and any
 * other path with its own 404; the `*` route here covers links inside the app that lead nowhere.
 * Pages load lazily, so later areas (the admin console and its charts) never weigh on the sign-in page.
 */
export function createRoutes(queryClient: QueryClient): RouteObject[] {
  const lazy = toLazyRoute(queryClient);
  return [
    {
      path: '/',
      Component: RootLayout,
      // Last resort, should the frame itself fail.
      ErrorBoundary: RouteErrorBoundary,
      children: [
        {
          // Pages fail and load inside the frame, so the header and <main> stay.
          ErrorBoundary: RouteErrorBoundary,
          HydrateFallback: PageLoader,
          children: [
            { index: true, lazy: () => import('./routes/home').then(lazy) },
            { path: pages.signIn.path, lazy: () => import('./routes/signIn').then(lazy) },
            { path: pages.account.path, lazy: () => import('./routes/account').then(lazy) },
            { path: pages.signedOut.path, lazy: () => import('./routes/signedOut').then(lazy) },
            { path: pages.authorize.path, lazy: () => import('./routes/authorize').then(lazy) },
            {
              path: pages.admin.path,
              handle: { wide: true } satisfies RouteHandle,
              lazy: () => import('./routes/adminLayout').then(lazy),
              children: [
                {
                  // A failing console page fails inside the console, so its navigation stays.
                  ErrorBoundary: RouteErrorBoundary,
                  HydrateFallback: PageLoader,
                  children: [
                    { index: true, lazy: () => import('./routes/adminDashboard').then(lazy) },
                    { path: pages.adminUsers.path, lazy: () => import('./routes/adminUsers').then(lazy) },
                    { path: pages.adminUser.path, lazy: () => import('./routes/adminUser').then(lazy) },
                    { path: pages.adminAudit.path, lazy: () => import('./routes/adminAudit').then(lazy) },
                    { path: pages.adminApps.path, lazy: () => import('./routes/adminApps').then(lazy) },
                    { path: pages.adminAppNew.path, lazy: () => import('./routes/adminAppNew').then(lazy) },
                    { path: pages.adminApp.path, lazy: () => import('./routes/adminApp').then(lazy) },
                    { path: pages.adminProviders.path, lazy: () => import('./routes/adminProviders').then(lazy) },
                    { path: pages.adminProviderNew.path, lazy: () => import('./routes/adminProviderNew').then(lazy) },
                    { path: pages.adminProvider.path, lazy: () => import('./routes/adminProvider').then(lazy) },
                    { path: pages.adminProviderTest.path, lazy: () => import('./routes/adminProviderTest').then(lazy) },
                    { path: '*', lazy: () => import('./routes/notFound').then(lazy) },
                  ],
                },
              ],
            },
            { path: '*', lazy: () => import('./routes/notFound').then(lazy) },
          ],
        },
      ],
    },
  ];
}

export function createRouter(queryClient: QueryClient) {
  return createBrowserRouter(createRoutes(queryClient));
}
