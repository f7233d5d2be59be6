// The note that the browser read a sensitive page no result showed reaches the agent with the result it gets:
// when a login wall switches to the user's Chrome, that is the reopened tab's result, not the one it replaces.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import type { TrackedPage } from '../../../src/browser/pages.ts';
import type { BrowserSession } from '../../../src/browser/session.ts';
import { Secrets } from '../../../src/core/secrets.ts';
import { RuleSet } from '../../../src/core/sensitiveRules.ts';
import { ToolRunner } from '../../../src/tools/runner.ts';
import { defineTool, text } from '../../../src/tools/tool.ts';

test('a sensitive page read in the background is told once, with the result the login-wall switch returns', async () => {
  const switched: string[] = [];
  const session = {
    mode: 'isolated',
    config: { attach: { wsEndpoint: 'ws://127.0.0.1:9/devtools/browser/x' } },
    onModeChange: () => undefined,
    takeNotices: () => [],
    attachShared: async () => {
      switched.push('shared');
    },
  } as unknown as BrowserSession;
  let runner: ToolRunner | undefined;
  // A redirect through a sensitive page onto a login wall: the backstop saw the sensitive document go.
  const open = defineTool({
    name: 'navigate_page',
    description: 'test',
    kind: 'read',
    schema: () => z.object({}),
    target: async () => ({ frames: [] }),
    handle: async () => {
      runner?.state.recordBackgroundRead('https://mail.example');
      return {
        content: [text('Opened https://login.example/')],
        loginWall: {
          url: 'https://login.example/',
          verdict: { isLoginWall: true, score: 5, evidence: ['a password field'] },
          tab: {} as TrackedPage,
        },
      };
    },
  });
  const reopen = defineTool({
    name: 'new_page',
    opensTab: true,
    description: 'test',
    kind: 'read',
    schema: () => z.object({ url: z.string() }),
    target: async () => ({ frames: [] }),
    handle: async () => ({ content: [text('Opened in p2')] }),
  });
  runner = new ToolRunner({
    tools: [open, reopen],
    context: { session, secrets: new Secrets(), timeoutMs: 1_000 },
    rules: new RuleSet([]),
    approver: { name: 'test human', ask: async () => ({ choice: 'approve' }) },
    audit: { record: () => undefined },
    policy: 'default',
    autoSwitch: true,
  });
  const result = await runner.call('navigate_page', {}, { frontEnd: 'test' });
  const shown = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  assert.deepEqual(switched, ['shared'], 'the login wall switched');
  assert.match(shown, /Opened in p2/);
  assert.equal(shown.match(/loaded or fetched the sensitive https:\/\/mail\.example/g)?.length, 1, shown);
});
