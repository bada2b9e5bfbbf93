import type { QueryClient } from '@tanstack/react-query';
import type { ComponentType } from 'react';
import type { LoaderFunction, RouteObject } from 'react-router';

/**
 * The shape of a route module under src/app/routes: the page as the default export, and optionally a
 * loader factory that receives the query client (so loaders fill the same cache the page reads).
 */
export interface RouteModule {
  default: ComponentType;
  clientLoader?: (queryClient: QueryClient) => LoaderFunction;
}

/** Turns a lazily imported route module into what react-router's `lazy` expects. */
export function toLazyRoute(queryClient: QueryClient) {
  return ({ default: Component, clientLoader }: RouteModule): Pick<RouteObject, 'Component' | 'loader'> => ({
    Component,
    ...(clientLoader ? { loader: clientLoader(queryClient) } : {}),
  });
}
