import { describe, expect, it } from 'vitest';
import { deviceLabel } from './deviceLabel';

describe('deviceLabel', () => {
  it('names the browser and the operating system', () => {
    expect(deviceLabel({ browser: 'Chrome 156', os: 'Linux', type: 'desktop' })).toBe('Chrome 156 on Linux');
    expect(deviceLabel({ browser: 'Safari 19', os: 'iOS', type: 'mobile' })).toBe('Safari 19 on iOS');
  });

  it('makes do with what is known', () => {
    expect(deviceLabel({ browser: 'Firefox 140', os: null, type: 'desktop' })).toBe('Firefox 140');
    expect(deviceLabel({ browser: null, os: 'Android', type: 'mobile' })).toBe('Phone on Android');
    expect(deviceLabel({ browser: null, os: 'Linux', type: 'other' })).toBe('Unknown browser on Linux');
    expect(deviceLabel({ browser: null, os: null, type: 'tablet' })).toBe('Unknown tablet');
    expect(deviceLabel({ browser: '  ', os: null, type: 'other' })).toBe('Unknown device');
    expect(deviceLabel(null)).toBe('Unknown device');
  });
});
