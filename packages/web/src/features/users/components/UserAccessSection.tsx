import type { AdminUser } from '@gatehouse/contract';
import { Button, Group, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconShieldCheck, IconShieldOff, IconUserCheck, IconUserOff } from '@tabler/icons-react';
import { useId, useState, type ReactNode } from 'react';
import { Item, ItemList } from '../../../components/ItemList';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import { isApiError } from '../../../lib/apiClient';
import { useReactivateUser } from '../api/reactivateUser';
import { useSetUserAdmin } from '../api/setUserAdmin';
import { AdminBadge, StatusBadge } from './UserBadges';
import { GrantAdminDialog } from './GrantAdminDialog';
import { SuspendUserDialog } from './SuspendUserDialog';

export interface UserAccessSectionProps {
  user: AdminUser;
  /** The admin is looking at their own account (suspending or demoting it locks them out). */
  isSelf: boolean;
}

function Row({ label, badge, description, descriptionId, action }: { label: string; badge: ReactNode; description: ReactNode; descriptionId: string; action: ReactNode }) {
  return (
    <Item actions={action}>
      <Stack gap={4}>
        <Group gap="xs">
          <Text fw={600} size="sm">
            {label}
          </Text>
          {badge}
        </Group>
        <Text size="sm" c="dimmed" id={descriptionId}>
          {description}
        </Text>
      </Stack>
    </Item>
  );
}

/** Why changing the admin role failed, in the words of the two refusals the server may give. */
function adminErrorTitle(error: unknown): string {
  if (isApiError(error) && error.code === 'last_admin') return 'Gatehouse needs at least one admin';
  if (isApiError(error) && error.code === 'admin_from_config') return 'The configuration file makes this person an admin';
  return "We couldn't change the admin role";
}

/** Whether the user may sign in (suspend, reactivate) and whether they are an admin (grant, remove). */
export function UserAccessSection({ user, isSelf }: UserAccessSectionProps) {
  const statusId = useId();
  const roleId = useId();
  const [dialogOpened, dialog] = useDisclosure(false);
  const [grantOpened, grantDialog] = useDisclosure(false);
  const reactivate = useReactivateUser();
  const setAdmin = useSetUserAdmin();
  const [message, setMessage] = useState('');
  const suspended = user.status === 'suspended';

  const resetAll = () => {
    setMessage('');
    reactivate.reset();
    setAdmin.reset();
  };

  const statusAction = suspended ? (
    <Button
      variant="default"
      leftSection={<IconUserCheck size={18} aria-hidden />}
      loading={reactivate.isPending}
      aria-describedby={statusId}
      onClick={() => {
        resetAll();
        reactivate.mutate(user.id, { onSuccess: () => setMessage(`${user.email} is active again and can sign in.`) });
      }}
    >
      Reactivate
    </Button>
  ) : (
    <Button
      color="red"
      variant="outline"
      leftSection={<IconUserOff size={18} aria-hidden />}
      // The server refuses to suspend the admin's own account; disabled, with the reason beside it.
      disabled={isSelf}
      aria-describedby={statusId}
      onClick={() => {
        resetAll();
        dialog.open();
      }}
    >
      Suspend
    </Button>
  );

  let roleDescription: string;
  if (user.admin && user.adminFromConfig) {
    roleDescription = 'An admin through the configuration file (admins: by email, or by a group that the provider named there asserts), so the role can only be removed there.';
  } else if (user.admin) {
    roleDescription = isSelf
      ? 'An admin, granted in the console. Removing your own role ends your access to this console.'
      : 'An admin, granted in the console: may manage users, apps and providers and read the audit log.';
  } else {
    roleDescription = 'A member: signs in and opens the apps their policies allow, without access to this console.';
  }

  const roleAction = user.admin ? (
    <Button
      variant="default"
      leftSection={<IconShieldOff size={18} aria-hidden />}
      // Disabled, not hidden, so the description beside it explains why.
      disabled={user.adminFromConfig}
      loading={setAdmin.isPending}
      aria-describedby={roleId}
      onClick={() => {
        resetAll();
        setAdmin.mutate({ userId: user.id, admin: false }, { onSuccess: () => setMessage(`${user.email} is no longer an admin.`) });
      }}
    >
      Remove admin
    </Button>
  ) : (
    <Button
      variant="default"
      leftSection={<IconShieldCheck size={18} aria-hidden />}
      loading={setAdmin.isPending}
      aria-describedby={roleId}
      onClick={() => {
        resetAll();
        grantDialog.open();
      }}
    >
      Grant admin
    </Button>
  );

  return (
    <Section title="Access" description="Whether this person may sign in, and whether they administer Gatehouse.">
      <ItemList label="Access">
        <Row
          label="Status"
          badge={<StatusBadge status={user.status} />}
          descriptionId={statusId}
          description={
            suspended
              ? "Suspended: can't sign in, and every session ended when the account was suspended."
              : isSelf
                ? "Active. This is your own account, which you can't suspend."
                : 'Active: may sign in with any linked identity.'
          }
          action={statusAction}
        />
        <Row
          label="Role"
          badge={user.admin ? <AdminBadge user={user} /> : null}
          descriptionId={roleId}
          description={roleDescription}
          action={roleAction}
        />
      </ItemList>
      {reactivate.isError && <ProblemAlert title={`We couldn't reactivate ${user.email}`} error={reactivate.error} />}
      {setAdmin.isError && <ProblemAlert title={adminErrorTitle(setAdmin.error)} error={setAdmin.error} />}
      {/* Always in the page, so screen readers announce the text when it changes. */}
      <Text size="sm" fw={500} role="status">
        {message}
      </Text>
      <GrantAdminDialog
        opened={grantOpened}
        user={user}
        onClose={grantDialog.close}
        onGranted={() => {
          grantDialog.close();
          setMessage(`${user.email} is now an admin.`);
        }}
      />
      <SuspendUserDialog
        opened={dialogOpened}
        user={user}
        onClose={dialog.close}
        onSuspended={() => {
          dialog.close();
          setMessage(`${user.email} is suspended; their sessions have ended.`);
        }}
      />
    </Section>
  );
}
