// `tabward approvals`: the open questions of every tabward of this home (docs/architecture.md "Consent"), read
// and answered over each process's Unix socket in the home's run/ folder. The same question text as every
// channel; live with --watch.

import { Command, Option } from 'commander';
import { listInboxSockets, type QuestionView, socketRequest } from '../approval/inboxSocket.ts';
import { shownAddress } from '../core/approvalDisplay.ts';
import { TabwardError } from '../core/errors.ts';
import { tabwardHome } from './config.ts';
import { ensureHome } from './home.ts';
import { secondsOption } from './options.ts';
import { terminalJson } from './terminalText.ts';

/** Serves the enrolment page until a passkey is enrolled (or the deadline): its address is for the human here. */
async function enrolPasskey(timeoutSeconds: number): Promise<void> {
  const home = ensureHome();
  const { startEnrolPage } = await import('../approval/enrolPage.ts');
  const page = await startEnrolPage(home);
  process.stdout.write(
    `Open this page in the browser you approve with (it needs your passkey, or a security key):\n  ${page.url}\nWaiting up to ${timeoutSeconds} s (Ctrl-C to stop)…\n`,
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    const passkey = await Promise.race([
      page.enrolled,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new TabwardError(
                'timeout',
                `No passkey was enrolled within ${timeoutSeconds} s.`,
                'Run it again.',
              ),
            ),
          timeoutSeconds * 1000,
        );
      }),
    ]);
    process.stdout.write(
      `Enrolled passkey ${passkey.id.slice(0, 12)}… in ${home}/passkeys.json. Start tabward mcp with --human-verified: then only it approves writes on sensitive pages.\n`,
    );
  } finally {
    clearTimeout(timer);
    await page.stop();
  }
}

interface Listed {
  readonly questions: QuestionView[];
  /** Processes whose socket did not answer, in words. */
  readonly unreachable: string[];
  readonly processes: number;
}

async function listAll(home: string): Promise<Listed> {
  const sockets = listInboxSockets(home);
  const questions: QuestionView[] = [];
  const unreachable: string[] = [];
  await Promise.all(
    sockets.map(async (socket) => {
      try {
        const reply = await socketRequest(socket.path, 'GET', '/questions');
        if (Array.isArray(reply.body)) questions.push(...(reply.body as QuestionView[]));
      } catch (error) {
        unreachable.push(
          `process ${socket.process}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }),
  );
  questions.sort((a, b) => a.askedAt.localeCompare(b.askedAt));
  return { questions, unreachable, processes: sockets.length };
}

/** `k7qm`, or `12345:k7qm` (the process, should two tabwards ever have the same id open). */
function resolve(id: string, questions: QuestionView[]): QuestionView {
  const match = /^(?:(\d+):)?([a-z2-9]{4})$/.exec(id.trim());
  if (!match)
    throw new TabwardError(
      'bad_input',
      `"${id}" is not a question id.`,
      'Ids are four letters and digits (k7qm), or with the process first (12345:k7qm); run tabward approvals to list them.',
    );
  const [, pid, n] = match;
  const found = questions.filter((q) => q.id === n && (pid === undefined || String(q.process) === pid));
  if (found.length === 1) return found[0] as QuestionView;
  if (found.length === 0)
    throw new TabwardError(
      'not_found',
      `No open question ${id} (answered already, withdrawn or expired).`,
      'Run tabward approvals to list the open ones.',
    );
  throw new TabwardError(
    'bad_input',
    `Question ${n} is open in ${found.length} tabward processes (${found.map((q) => q.process).join(', ')}).`,
    `Say which, as ${found[0]?.process}:${n}.`,
  );
}

async function answer(id: string, decision: Record<string, unknown>): Promise<void> {
  const home = tabwardHome();
  const { questions } = await listAll(home);
  const question = resolve(id, questions);
  const socket = listInboxSockets(home).find((s) => s.process === question.process);
  if (!socket) throw new TabwardError('not_found', `tabward process ${question.process} has ended.`);
  const reply = await socketRequest(socket.path, 'POST', '/answer', { id: question.id, decision });
  const error = (reply.body as { error?: string } | undefined)?.error;
  if (reply.status !== 200)
    throw new TabwardError(
      reply.status === 400 ? 'bad_input' : 'not_found',
      error ?? `answer refused (${reply.status})`,
    );
  process.stdout.write(
    `question ${id}: ${String(decision.choice)} sent (${question.tool} on ${question.page ? shownAddress(question.page) : 'the browser'})\n`,
  );
}

function printQuestion(question: QuestionView, qualified: boolean): void {
  const id = qualified ? `${question.process}:${question.id}` : question.id;
  const offers = question.offers.length ? ` (also: ${question.offers.join(', ')})` : '';
  process.stdout.write(
    [
      `[${id}]${question.sensitive ? ' SENSITIVE' : ''} asked ${question.askedAt}`,
      ...question.question.split('\n').map((line) => `  ${line}`),
      `  answer: tabward approvals approve ${id} | reject ${id} --reason "…" | skip ${id}${offers}`,
      ...(question.pageUrl ? [`  or open: ${question.pageUrl}`] : []),
      '',
    ].join('\n'),
  );
}

async function list(flags: { json?: boolean; watch?: boolean }): Promise<void> {
  const home = tabwardHome();
  const shown = new Set<string>();
  for (;;) {
    const listed = await listAll(home);
    const qualified = new Set(listed.questions.map((q) => q.process)).size > 1;
    if (flags.json && !flags.watch) {
      process.stdout.write(`${terminalJson(listed.questions)}\n`);
      return;
    }
    if (!flags.watch) {
      for (const line of listed.unreachable) process.stderr.write(`tabward: ${line}\n`);
      if (listed.questions.length === 0)
        process.stdout.write(
          `No open questions (${listed.processes} tabward process${listed.processes === 1 ? '' : 'es'} running with home ${home}).\n`,
        );
      for (const question of listed.questions) printQuestion(question, qualified);
      return;
    }
    // --watch: each question once as it opens, a line when it closes; --json prints one object per line.
    const now = new Set(listed.questions.map((q) => `${q.process}:${q.id}`));
    for (const question of listed.questions) {
      const key = `${question.process}:${question.id}`;
      if (shown.has(key)) continue;
      shown.add(key);
      if (flags.json) process.stdout.write(`${terminalJson(question, 0)}\n`);
      else printQuestion(question, qualified);
    }
    for (const key of [...shown])
      if (!now.has(key)) {
        shown.delete(key);
        if (!flags.json) process.stdout.write(`[${key}] closed (answered, withdrawn or expired)\n`);
      }
    await new Promise((done) => setTimeout(done, 1_000));
  }
}

export function approvalsCommand(): Command {
  const command = new Command('approvals')
    .description(
      'List and answer the questions the running tabwards of this home wait on (the same text every channel shows).',
    )
    .option('--json', 'print the open questions as a JSON array (with --watch: one object per line)')
    .option('--watch', 'keep listing: each question as it opens, a line as it closes (Ctrl-C to stop)')
    .action(list);
  command
    .command('approve <id>')
    .description('approve question ID (as listed, e.g. k7qm)')
    .addOption(
      new Option(
        '--site-grant <minutes>',
        'also allow this tool on this site unasked, where the question offers it',
      ).choices(['15', '60']),
    )
    .option('--all', 'also approve this tool from now on, where the question offers it')
    .action((id: string, flags: { siteGrant?: string; all?: boolean }) =>
      answer(
        id,
        flags.siteGrant
          ? { choice: 'site-grant', minutes: Number(flags.siteGrant) }
          : flags.all
            ? { choice: 'approve-all', scope: 'tool' }
            : { choice: 'approve' },
      ),
    );
  command
    .command('reject <id>')
    .description('reject question ID; the agent is told the reason')
    .option('--reason <text>', 'why, for the agent')
    .action((id: string, flags: { reason?: string }) =>
      answer(id, { choice: 'reject', ...(flags.reason ? { reason: flags.reason } : {}) }),
    );
  command
    .command('enroll')
    .description(
      'enroll a passkey (PIN, fingerprint, security key) for human-verified approvals (tabward mcp --human-verified)',
    )
    .option('--timeout <seconds>', 'give up after this long', secondsOption('--timeout'), 300)
    .action((flags: { timeout: number }) => enrolPasskey(flags.timeout));
  command
    .command('skip <id>')
    .description('skip question ID: the action is not done, the agent goes on')
    .action((id: string) => answer(id, { choice: 'skip' }));
  return command;
}
