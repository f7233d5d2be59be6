// The consent desk of one tabward process (docs/architecture.md "Consent"): its inbox of open questions and the
// channels that carry them to the human without the MCP client (the per-home socket `tabward approvals` reads,
// the desktop notification, the approval page each question links to). Started once the client has its tool
// list: nothing here is needed for the first reply. Nothing it prints names an address or a token.

import type { ApprovalPage } from '../approval/approvalPage.ts';
import { ApprovalInbox, type Question } from '../approval/inbox.ts';
import { InboxApprover, type InboxApproverOptions } from '../approval/inboxApprover.ts';
import type { InboxSocket } from '../approval/inboxSocket.ts';
import { desktopNotifier } from '../approval/notifier.ts';
import { loadPasskeys } from '../approval/passkeyStore.ts';
import type { Approver } from '../core/approvals.ts';
import { swallow } from '../core/debug.ts';
import { forDisplay } from '../core/displayText.ts';
import { TabwardError } from '../core/errors.ts';

export interface ConsentDeskOptions {
  readonly home: string;
  /** How long an MCP call waits for the human before it answers "still waiting" (under the client's timeout). */
  readonly waitMs: number;
  /** How long a caller that cannot pend (a recipe, a held request) waits before the answer is no. */
  readonly maxWaitMs: number;
  readonly notify: boolean;
  /** Questions on sensitive pages need a passkey assertion to be approved (--human-verified). */
  readonly humanVerified: boolean;
  /** Each approval page token, as it is made and as it dies: the redactor hides it from all the agent reads. */
  readonly secret: { made(token: string): void; gone(token: string): void };
  /** The page's port, once it listens: tabward's own, refused to the agent's browser. */
  readonly ownPort: (port: number) => void;
  readonly log: (line: string) => void;
}

/** Where the human answers when the MCP client does not ask: told to the agent with every "still waiting". */
export const answeredWhere = 'in `tabward approvals` in your terminal, or from the desktop notification';

export class ConsentDesk {
  readonly inbox: ApprovalInbox;
  private page: ApprovalPage | undefined;
  private socket: InboxSocket | undefined;
  private starting: Promise<void> | undefined;
  /** Where the inbox's own events go (a late answer ignored, a question expired): set once the audit exists. */
  record: (line: string) => void = () => undefined;

  constructor(private readonly options: ConsentDeskOptions) {
    // Fail closed before anything is asked: a mode that needs a passkey with none enrolled could approve nothing.
    if (options.humanVerified && loadPasskeys(options.home).length === 0)
      throw new TabwardError(
        'bad_input',
        `--human-verified needs a passkey, and ${options.home} has none.`,
        'Enroll one first: tabward approvals enroll.',
      );
    const notify = desktopNotifier(options.notify, options.log);
    this.inbox = new ApprovalInbox({
      opened: (question) => {
        const request = question.request;
        // No page address: a notifier's text is its command line (notify-send, osascript), which every local user
        // can read while it runs, and the address's token is all the approval page asks for. `tabward approvals`
        // prints it, in the human's own terminal.
        // Nor where the agent browses: the tool and the question's id only (`tabward approvals` shows the rest).
        notify(
          `tabward asks: ${forDisplay(request.tool)}${request.sensitive ? ' on a sensitive page' : ''}`,
          `Answer: tabward approvals approve ${question.id}  (or reject ${question.id}; tabward approvals shows the question and its page)`,
        );
      },
      record: (line) => this.record(line),
      needsPresence: (request) => options.humanVerified && request.sensitive,
    });
  }

  /** Starts the socket and the page (once); asks made before wait in the inbox all the same. */
  start(): Promise<void> {
    this.starting ??= (async () => {
      const [{ ApprovalPage }, { serveInboxSocket }] = await Promise.all([
        import('../approval/approvalPage.ts'),
        import('../approval/inboxSocket.ts'),
      ]);
      const page = new ApprovalPage(
        this.inbox,
        this.options.secret,
        this.options.humanVerified ? this.options.home : undefined,
      );
      await page.start();
      this.options.ownPort(page.listeningPort);
      this.page = page;
      this.socket = await serveInboxSocket(
        this.inbox,
        this.options.home,
        (question) => this.pageUrl(question),
        () => page.listeningPort,
      );
    })();
    return this.starting;
  }

  /** The approval page of one question, once the page runs. */
  pageUrl(question: Question): string | undefined {
    return this.page?.urlFor(question);
  }

  /** An approver on this desk; `channels` adds a caller's own (MCP elicitation), `name` says which in the audit. */
  approver(
    name = 'the inbox (tabward approvals, notification)',
    channels?: InboxApproverOptions['channels'],
  ): Approver {
    return new InboxApprover({
      inbox: this.inbox,
      waitMs: this.options.waitMs,
      maxWaitMs: this.options.maxWaitMs,
      where: answeredWhere,
      name,
      ...(channels ? { channels } : {}),
    });
  }

  async stop(): Promise<void> {
    this.inbox.closeAll('tabward is shutting down');
    await this.starting?.catch(swallow('cli', 'consentDesk.stop: a start in flight failed'));
    await Promise.all([this.socket?.close(), this.page?.stop()]);
  }
}
