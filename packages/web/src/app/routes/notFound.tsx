import { pages } from '@gatehouse/contract';
import { Button, Text } from '@mantine/core';
import { Link } from 'react-router';
import { ErrorCard } from '../../components/ErrorCard';

/** Any client route the app does not know. (The server answers unknown non-app paths with a real 404.) */
export default function NotFoundRoute() {
  return (
    <ErrorCard
      title="Page not found"
      actions={
        <Button component={Link} to={pages.home.href()}>
          Back to your apps
        </Button>
      }
    >
      <Text>There is nothing at this address.</Text>
    </ErrorCard>
  );
}
