// Device and network emulation of one tab (the emulate tool): the viewport and colour scheme through Playwright,
// the user agent, touch, CPU and network throttling through a CDP session of tabward's own, kept open for the
// tab's life (Chromium drops a session's overrides when it detaches, which is also how leaving the user's Chrome
// undoes them). Device scale and mobile layout are left out: Playwright's own screenshots put back its device
// metrics over another session's (measured on Chromium 156), so they would not survive take_screenshot.

import type { CDPSession } from 'playwright-core';
import { withDeadline } from './deadline.ts';
import type { TrackedPage } from './pages.ts';

/** Network presets (throughput in bytes per second, latency in ms), as DevTools names them. */
export const networkPresets = {
  'No emulation': { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 },
  Offline: { offline: true, latency: 0, downloadThroughput: -1, uploadThroughput: -1 },
  'Slow 3G': { offline: false, latency: 2000, downloadThroughput: 50_000, uploadThroughput: 50_000 },
  'Fast 3G': { offline: false, latency: 560, downloadThroughput: 180_000, uploadThroughput: 84_000 },
  'Slow 4G': { offline: false, latency: 150, downloadThroughput: 400_000, uploadThroughput: 400_000 },
  'Fast 4G': { offline: false, latency: 60, downloadThroughput: 1_100_000, uploadThroughput: 1_100_000 },
} as const;
export type NetworkPreset = keyof typeof networkPresets;

export interface EmulationRequest {
  readonly viewport?:
    | { readonly width: number; readonly height: number; readonly hasTouch?: boolean | undefined }
    | undefined;
  /** '' goes back to the browser's own. */
  readonly userAgent?: string | undefined;
  readonly networkConditions?: NetworkPreset | undefined;
  /** 1 = no slowdown. */
  readonly cpuThrottlingRate?: number | undefined;
  readonly colorScheme?: 'dark' | 'light' | 'auto' | undefined;
}

/** What a tab emulates now, as told back to the agent. */
export type EmulationState = Record<string, string>;

const sessions = new WeakMap<TrackedPage, Promise<CDPSession>>();
const states = new WeakMap<TrackedPage, EmulationState>();

export async function emulate(
  tab: TrackedPage,
  request: EmulationRequest,
  timeoutMs: number,
): Promise<EmulationState> {
  const state = { ...(states.get(tab) ?? {}) };
  const work = async () => {
    const { viewport, userAgent, networkConditions, cpuThrottlingRate, colorScheme } = request;
    if (viewport) {
      await tab.page.setViewportSize({ width: viewport.width, height: viewport.height });
      state.viewport = `${viewport.width}x${viewport.height}`;
      if (viewport.hasTouch !== undefined) {
        await (await cdpOf(tab)).send('Emulation.setTouchEmulationEnabled', {
          enabled: viewport.hasTouch,
          ...(viewport.hasTouch ? { maxTouchPoints: 5 } : {}),
        });
        setOrClear(state, 'touch', viewport.hasTouch ? 'on' : undefined);
      }
    }
    if (userAgent !== undefined) {
      await (await cdpOf(tab)).send('Emulation.setUserAgentOverride', { userAgent });
      setOrClear(state, 'user agent', userAgent || undefined);
    }
    if (networkConditions !== undefined) {
      await (await cdpOf(tab)).send('Network.emulateNetworkConditions', networkPresets[networkConditions]);
      setOrClear(state, 'network', networkConditions === 'No emulation' ? undefined : networkConditions);
    }
    if (cpuThrottlingRate !== undefined) {
      await (await cdpOf(tab)).send('Emulation.setCPUThrottlingRate', { rate: cpuThrottlingRate });
      setOrClear(state, 'cpu', cpuThrottlingRate === 1 ? undefined : `${cpuThrottlingRate}x slower`);
    }
    if (colorScheme !== undefined) {
      await tab.page.emulateMedia({ colorScheme: colorScheme === 'auto' ? null : colorScheme });
      setOrClear(state, 'color scheme', colorScheme === 'auto' ? undefined : colorScheme);
    }
  };
  await withDeadline(work(), timeoutMs, 'Emulating', tab.interrupted);
  states.set(tab, state);
  return state;
}

function cdpOf(tab: TrackedPage): Promise<CDPSession> {
  let session = sessions.get(tab);
  if (!session) {
    session = tab.page.context().newCDPSession(tab.page);
    // A failed attach is tried again next time, not remembered.
    session.catch(() => sessions.delete(tab));
    sessions.set(tab, session);
  }
  return session;
}

function setOrClear(state: EmulationState, key: string, value: string | undefined): void {
  if (value === undefined) delete state[key];
  else state[key] = value;
}
