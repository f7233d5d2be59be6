// The local approval page, started after the MCP client has its tool list: its web server is not needed for
// the first reply, and a client waits for that reply on every start. Asks made before it is up wait for it.

import type { ApprovalPage } from '../approval/approvalPage.ts';
import type { ApprovalChoice, ApprovalRequest, Approver } from '../core/approvals.ts';

export class LazyApprovalPage implements Approver {
  private page: ApprovalPage | undefined;
  private starting: Promise<ApprovalPage> | undefined;

  constructor(
    private readonly log: (line: string) => void,
    /** Told the page's port and token once it is up, before anyone can be asked on it. */
    private readonly onStarted: (port: number, token: string) => void = () => undefined,
  ) {}

  /** Never the page's address: this name reaches the agent (browser_status, audit), the token must not. */
  get name(): string {
    return this.page ? "the approval page (its address is on tabward's stderr)" : 'page (starting)';
  }

  /** Starts the page (once); resolves with its address. */
  async start(): Promise<string> {
    this.starting ??= import('../approval/approvalPage.ts').then(async ({ ApprovalPage }) => {
      const page = new ApprovalPage({ notify: this.log });
      const url = await page.start();
      this.onStarted(Number(new URL(url).port), page.token);
      this.log(`tabward: approval page at ${url}`);
      this.page = page;
      return page;
    });
    return (await this.starting).url;
  }

  async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalChoice> {
    await this.start();
    if (!this.page) return { choice: 'reject', reason: 'the approval page could not start' };
    return this.page.ask(request, signal);
  }

  async stop(): Promise<void> {
    await this.page?.stop();
  }
}
