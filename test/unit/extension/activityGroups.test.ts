// The popup's activity as AgentRQ users know it: each agent's session, its calls by task id, each with a live
// state (waiting for approval, running, done, failed).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupActivity } from '../../../extension/src/activityGroups.ts';
import type { ActivityEntry } from '../../../src/protocol/siteTools.ts';

let clock = 0;
const line = (agent: string, taskId: string, event: ActivityEntry['event'], detail = ''): ActivityEntry => ({
  at: new Date(Date.UTC(2026, 0, 1, 12, 0, clock++)).toISOString(),
  agent,
  taskId,
  site: 'https://shop.example',
  tool: taskId.startsWith('task-r') ? 'searchProducts' : 'addToCart',
  event,
  detail,
});

test('calls are grouped by agent, newest agent first, each with its live state', () => {
  const entries = [
    line('build-server', 'task-r1', 'called', 'runs in https://shop.example/'),
    line('build-server', 'task-r1', 'done', '120 bytes'),
    line('laptop', 'task-w1', 'waiting', 'waits for approval: the site tool may change state'),
    line('build-server', 'task-w2', 'waiting', 'waits for approval'),
    line('build-server', 'task-w2', 'approved'),
    line('build-server', 'task-w2', 'called', 'runs in https://shop.example/'),
    line('cron', 'task-w3', 'waiting'),
    line('cron', 'task-w3', 'denied'),
    line('cron', 'task-w3', 'failed', 'The user rejected addToCart'),
  ];
  const groups = groupActivity(entries, []);
  assert.deepEqual(
    groups.map((g) => [g.agent, g.calls.map((c) => [c.taskId, c.state])]),
    [
      ['cron', [['task-w3', 'failed']]],
      [
        'build-server',
        [
          ['task-w2', 'running'],
          ['task-r1', 'done'],
        ],
      ],
      ['laptop', [['task-w1', 'waiting for approval']]],
    ],
  );
  const cron = groups[0]?.calls[0];
  assert.deepEqual(cron?.trail, ['waiting', 'denied', 'failed']);
  assert.equal(cron?.detail, 'The user rejected addToCart');
});

test("a question this browser asks itself shows as waiting, even before the relay's lines; an ended call stays ended", () => {
  const waiting = [
    {
      taskId: 'task-w9',
      agent: 'laptop',
      site: 'https://shop.example',
      tool: 'addToCart',
      reason: 'sensitive',
    },
    { taskId: 'task-w1', agent: 'laptop', site: 'https://shop.example', tool: 'addToCart', reason: 'x' },
  ];
  const groups = groupActivity(
    [line('laptop', 'task-w8', 'called'), line('laptop', 'task-w1', 'done')],
    waiting,
  );
  assert.deepEqual(
    groups[0]?.calls.map((c) => [c.taskId, c.state, c.detail]),
    [
      ['task-w9', 'waiting for approval', 'sensitive'],
      ['task-w1', 'done', ''],
      ['task-w8', 'running', ''],
    ],
  );
});

test('each agent shows its latest calls only', () => {
  const entries = Array.from({ length: 20 }, (_, i) => line('busy', `task-r${i}`, 'done'));
  const [busy] = groupActivity(entries, [], 8);
  assert.equal(busy?.calls.length, 8);
  assert.equal(busy?.calls[0]?.taskId, 'task-r19');
});
