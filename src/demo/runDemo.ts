// `tabward demo`: the whole story in the terminal with a scripted MCP client and a scripted human, no model
// needed. A real `tabward mcp` process, real Chromium browsers, a real demo site on 127.0.0.1.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { formatAuditEntry, readAuditLog } from '../audit/auditLog.ts';
import { removeAtExit } from '../browser/launch.ts';
import { packageRoot } from '../cli/packageRoot.ts';
import { demoHost, startDemoSite } from './demoSite.ts';
import { ScriptedHuman } from './scriptedHuman.ts';
import { startUserChrome } from './yourChrome.ts';

type Print = (line: string) => void;

export async function runDemo(print: Print, executablePath?: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tabward-demo-'));
  // Ctrl-C mid-demo exits through process.exit: the folder goes then too.
  const forgetWork = removeAtExit(work);
  const site = await startDemoSite();
  const chromeArgs = [`--host-resolver-rules=MAP ${demoHost} 127.0.0.1`];
  const closers: (() => Promise<unknown>)[] = [
    () => site.close(),
    async () => {
      rmSync(work, { recursive: true, force: true });
      forgetWork();
    },
  ];
  try {
    print(`1. Demo site "Acme intranet" at ${site.origin} (127.0.0.1 only).`);
    print(
      '2. Starting "your Chrome": a separate Chromium profile, logged in as alice through the real login form,',
    );
    print('   with your own tab open on the private roadmap.');
    const userChrome = await startUserChrome({
      chromeArgs,
      ...(executablePath ? { executablePath } : {}),
      login: { url: `${site.origin}/login?next=/wiki/private`, username: 'alice', password: 'demo-password' },
      openTab: `${site.origin}/wiki/private`,
    });
    closers.unshift(() => userChrome.close());
    const rulesFile = join(work, 'rules.txt');
    writeFileSync(rulesFile, `# demo rule: Acme's admin pages are sensitive\n*://*.acme.test/admin/*\n`);
    const auditLog = join(work, 'audit.jsonl');
    const { client, human } = await connectClient(print, [
      'mcp',
      '--mode',
      'auto',
      '--approval',
      'elicit',
      '--user-data-dir',
      userChrome.userDataDir,
      '--rules',
      rulesFile,
      '--audit-log',
      auditLog,
      ...chromeArgs.flatMap((arg) => ['--chrome-arg', arg]),
      ...(executablePath ? ['--executable-path', executablePath] : []),
    ]);
    closers.unshift(() => client.close());
    await story(client, human, site.origin, print);
    print(`\nThe demo site recorded these writes: ${JSON.stringify(site.writes)}`);
    print('\nThe audit log (tabward audit):');
    for (const entry of readAuditLog(auditLog).entries) print(`  ${formatAuditEntry(entry)}`);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

async function connectClient(
  print: Print,
  args: string[],
): Promise<{ client: Client; human: ScriptedHuman }> {
  // The same launcher that started this demo (bin/tabward, or the checkout's dev launcher), so the demo's
  // server runs the code the user is looking at.
  const bin = process.argv[1] ?? join(packageRoot, 'bin', 'tabward');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, ...args],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'tabward-demo', version: '1' }, { capabilities: { elicitation: {} } });
  const human = new ScriptedHuman(print);
  human.attach(client);
  await client.connect(transport);
  const { tools } = await client.listTools();
  print(`3. An MCP client connected to \`tabward mcp --mode auto\`: ${tools.length} tools.`);
  return { client, human };
}

function refOf(snapshot: string, name: string): string {
  // A plain name is shown bare, one that could be misread quoted (snapshotFormat.ts shownName).
  return new RegExp(`(?:"${name}"|\\b${name}) @(\\S+)`).exec(snapshot)?.[1] ?? 'missing-ref';
}

async function story(client: Client, human: ScriptedHuman, origin: string, print: Print): Promise<void> {
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as { type: string; text?: string }[])
      .map((part) => part.text ?? `[${part.type}]`)
      .join('\n');
    print(`  ${result.isError ? '✗' : '→'} ${text.replace(/\n/g, '\n    ')}`);
    return text;
  };
  print('\n4. Read a public page in the isolated browser (a throwaway profile, no logins):');
  await call('new_page', { url: `${origin}/wiki/public` });
  await call('take_snapshot', { query: 'cafeteria' });

  print(
    '\n5. Open the private roadmap: a login wall. tabward asks whether to use your Chrome; the human says yes.',
  );
  human.will({ decision: 'approve' });
  await call('new_page', { url: `${origin}/wiki/private` });
  await call('take_snapshot', { query: 'Q3' });

  print('\n6. Open the admin settings (a sensitive page: navigation asks), then try "Delete workspace".');
  human.will({ decision: 'approve' }, { decision: 'reject', reason: 'never delete the workspace' });
  await call('navigate_page', { url: `${origin}/admin/settings` });
  const snapshot = await call('take_snapshot');
  await call('click', { ref: refOf(snapshot, 'Delete workspace') });

  print('\n7. Click "Save" instead: the human approves this one click, and it runs once.');
  human.will({ decision: 'approve' });
  await call('click', { ref: refOf(snapshot, 'Save') });

  print('\n8. Try to close one of your own tabs: blocked, no approval can override it.');
  const pages = await call('list_pages');
  const userTab = /(p\d+) \[user\]/.exec(pages)?.[1] ?? 'p1';
  await call('close_page', { pageId: userTab });
}
