import type { Device } from '@gatehouse/contract';
import { UAParser } from 'ua-parser-js';

/** What a person recognises a session by: "Chrome 156 on Linux". Parsed from the stored user agent. */
export function describeDevice(userAgent: string | null): Device {
  if (!userAgent) return { browser: null, os: null, type: 'other' };
  const parsed = new UAParser(userAgent).getResult();
  const major = parsed.browser.version?.split('.')[0];
  const browser = parsed.browser.name ? `${parsed.browser.name}${major ? ` ${major}` : ''}` : null;
  const os = parsed.os.name ? `${parsed.os.name}${parsed.os.version && parsed.os.name !== 'Linux' ? ` ${parsed.os.version}` : ''}` : null;
  const type = parsed.device.type === 'mobile' || parsed.device.type === 'tablet' ? parsed.device.type : browser || os ? 'desktop' : 'other';
  return { browser, os, type };
}
