import { BackLink } from '../../../components/BackLink';
import { paths } from '../../../config/paths';

/** "All providers": back to the list from a provider's page. */
export function BackToProviders() {
  return <BackLink to={paths.adminProviders.getHref()}>All providers</BackLink>;
}
