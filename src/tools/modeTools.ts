// Browser-mode tools: status, attaching to the user's own Chrome, and going back to an isolated browser.

import { z } from 'zod';
import { resolveEndpoint } from '../browser/connect.ts';
import { defineTool, text } from './tool.ts';

export const browserStatus = defineTool({
  name: 'browser_status',
  reportsGuardState: true,
  description: 'Browser mode (isolated/shared/remote), tabs and owners, approvals in force.',
  kind: 'read',
  schema: () => z.object({}),
  target: async () => ({ frames: [] }),
  // The runner adds the guard's view (grants, taint, approver) to this.
  handle: async (_args, { session }) => {
    const status = session.status();
    const lines = [
      `mode: ${status.mode}${status.started ? '' : ' (not started)'}`,
      ...(status.browserVersion
        ? [
            `browser: ${status.browserVersion} at ${status.endpoint}${status.pid ? ` (pid ${status.pid})` : ''}`,
          ]
        : status.pid
          ? [`browser: running (pid ${status.pid}); this client's context opens with its first page`]
          : []),
      ...(status.profile ? [`temporary profile: ${status.profile}`] : []),
      ...(status.context ? [`context: ${status.context}`] : []),
      `tool categories: core${session.devtools ? ', devtools' : ''} (--tools)`,
      ...status.tabs.map((tab) => `${tab.selected ? '*' : ' '}${tab.id} [${tab.owner}] ${tab.url}`),
    ];
    return { content: [text(lines.join('\n'))] };
  },
});

export const browserConnect = defineTool({
  name: 'browser_connect',
  attachesUserBrowser: true,
  description:
    "Use the user's own Chrome and its logins (asks the user): for a login wall, a no-access page, a QR login.",
  kind: 'mode',
  schema: () =>
    z.object({
      browserUrl: z.string().optional().describe('e.g. http://127.0.0.1:9222; default: auto-discover'),
      wsEndpoint: z.string().optional(),
    }),
  // Before the user is asked: a Chrome that cannot be reached is an error saying how to enable it, not a question.
  target: async (args, { session }) => {
    const target = args.browserUrl || args.wsEndpoint ? { ...args } : session.config.attach;
    if (session.mode !== 'shared') await resolveEndpoint(cleanTarget(target), 3000);
    return { frames: [] };
  },
  handle: async (args, { session }) => {
    const target = args.browserUrl || args.wsEndpoint ? { ...args } : session.config.attach;
    await session.attachShared(cleanTarget(target));
    const status = session.status();
    return {
      content: [
        text(
          `Connected to your Chrome ${status.browserVersion ?? ''}; ${status.tabs.length} tab(s) are yours, new tabs are the agent's.`,
        ),
      ],
    };
  },
});

export const browserDisconnect = defineTool({
  name: 'browser_disconnect',
  description: "Leave the user's Chrome open (the agent's tabs close) and go back to an isolated browser.",
  kind: 'mode',
  schema: () => z.object({}),
  target: async () => ({ frames: [] }),
  handle: async (_args, { session }) => {
    await session.detach();
    return {
      content: [
        text(
          "Detached; your Chrome and your own tabs are untouched, the agent's tabs there were closed (left open, their pages would run with nobody watching what they send). Back to an isolated browser.",
        ),
      ],
    };
  },
});

function cleanTarget(target: {
  browserUrl?: string | undefined;
  wsEndpoint?: string | undefined;
  userDataDir?: string | undefined;
}) {
  return {
    ...(target.browserUrl ? { browserUrl: target.browserUrl } : {}),
    ...(target.wsEndpoint ? { wsEndpoint: target.wsEndpoint } : {}),
    ...(target.userDataDir ? { userDataDir: target.userDataDir } : {}),
  };
}
