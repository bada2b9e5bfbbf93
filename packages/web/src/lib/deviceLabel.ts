import type { Device } from '@gatehouse/contract';

const TYPE_NAMES: Record<Device['type'], string> = {
  desktop: 'Computer',
  mobile: 'Phone',
  tablet: 'Tablet',
  other: 'Device',
};

/**
 * A session's device as a person would name it: "Chrome 156 on Linux", "Firefox 140", "Phone on
 * Android", or "Unknown device" when the server could make nothing of the User-Agent.
 */
export function deviceLabel(device: Device | null | undefined): string {
  const browser = device?.browser?.trim() || null;
  const os = device?.os?.trim() || null;
  if (browser && os) return `${browser} on ${os}`;
  if (browser) return browser;
  const type = device && TYPE_NAMES[device.type] && device.type !== 'other' ? TYPE_NAMES[device.type] : null;
  if (os) return `${type ?? 'Unknown browser'} on ${os}`;
  return type ? `Unknown ${type.toLowerCase()}` : 'Unknown device';
}
