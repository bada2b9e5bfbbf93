import { BackLink } from '../../../components/BackLink';
import { paths } from '../../../config/paths';

/** "All apps": back to the list from an app's page. */
export function BackToApps() {
  return <BackLink to={paths.adminApps.getHref()}>All apps</BackLink>;
}
