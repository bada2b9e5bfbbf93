import { pages } from '@gatehouse/contract';
import { BackLink } from '../../../components/BackLink';

/** "All providers": back to the list from a provider's page. */
export function BackToProviders() {
  return <BackLink to={pages.adminProviders.href()}>All providers</BackLink>;
}
