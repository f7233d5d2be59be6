// Makes the README's two pictures of an approval: docs/approval-page.png (the real approval page of one question,
// served by the real ApprovalPage from a real inbox) and docs/approval-terminal.png (the real TerminalApprover's
// words for the same question, as `tabward agent` prints them). Run: npx tsx scripts/approvalScreenshots.ts

import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { LineReader } from '../src/agent/lineReader.ts';
import { TerminalApprover } from '../src/agent/terminalApprover.ts';
import { ApprovalPage } from '../src/approval/approvalPage.ts';
import { ApprovalInbox } from '../src/approval/inbox.ts';
import { InboxApprover } from '../src/approval/inboxApprover.ts';
import { findChrome } from '../src/browser/findChrome.ts';
import type { ApprovalRequest } from '../src/core/approvals.ts';

const question: ApprovalRequest = {
  id: 'a1',
  tool: 'click',
  kind: 'write',
  reason: 'writes on sensitive pages need a fresh approval (https://github.com)',
  rule: '*://github.com/settings/*',
  sensitive: true,
  approveAllAllowed: false,
  url: 'https://github.com/acme/api/settings/hooks',
  origin: 'https://github.com',
  destination: 'POST github.com/acme/api/settings/hooks/481/delete',
  element: { role: 'button', name: 'Delete webhook' },
  args: { ref: 'e14' },
  frontEnd: 'mcp',
};
const out = (name: string) => fileURLToPath(new URL(`../docs/${name}`, import.meta.url));

// The terminal: what the approver writes, and the prompt it waits on.
let terminal = '';
const reader = {
  next: async (prompt: string) => {
    terminal += `${prompt}y`;
    return 'y';
  },
} as unknown as LineReader;
await new TerminalApprover(reader, (text) => {
  terminal += text;
}).ask(question);

const inbox = new ApprovalInbox();
const page = new ApprovalPage(inbox);
await page.start();
const asking = new InboxApprover({
  inbox,
  waitMs: 60_000,
  maxWaitMs: 60_000,
  where: 'here',
  name: 'page',
}).ask(question);
const browser = await chromium.launch({
  executablePath: findChrome(),
  headless: true,
  args: ['--no-sandbox'],
});
try {
  const tab = await browser.newPage({ viewport: { width: 820, height: 560 }, deviceScaleFactor: 1 });
  const [open] = inbox.list();
  if (!open) throw new Error('the question did not reach the inbox');
  await tab.goto(page.urlFor(open) ?? '');
  await tab.locator('.card').waitFor();
  await tab.screenshot({ path: out('approval-page.png'), fullPage: true });
  console.log(`wrote ${out('approval-page.png')}`);

  await tab.setContent(
    `<body style="margin:0;background:#1e1e1e"><pre style="margin:0;padding:16px 20px;color:#ddd;font:14px/1.45 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap">${terminal.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`)}</pre></body>`,
  );
  await tab.setViewportSize({ width: 820, height: 200 });
  await tab.screenshot({ path: out('approval-terminal.png'), fullPage: true });
  console.log(`wrote ${out('approval-terminal.png')}`);
} finally {
  await browser.close();
  inbox.closeAll('done');
  await asking;
  await page.stop();
}
