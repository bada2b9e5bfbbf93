import { pages } from '@gatehouse/contract';
import { BackLink } from '../../../components/BackLink';

/** "All apps": back to the list from an app's page. */
export function BackToApps() {
  return <BackLink to={pages.adminApps.href()}>All apps</BackLink>;
}
