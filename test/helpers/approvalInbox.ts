// The human at `tabward approvals`, for e2e tests: the running tabward's open questions and answers to them,
// over the home's inbox socket (the same requests the command makes).

import { listInboxSockets, type QuestionView, socketRequest } from '../../src/approval/inboxSocket.ts';
import { waitFor } from './waitFor.ts';

export interface InboxHuman {
  questions(): Promise<QuestionView[]>;
  /** The first open question of `tool` (waits for one). */
  question(tool: string, timeoutMs?: number): Promise<QuestionView>;
  /** The approval page's port (each question's page is on it). */
  pagePort(): Promise<number>;
  /** Answers; the HTTP status the inbox gave (200, 404 for a question gone). */
  answer(id: string, decision: Record<string, unknown> | string): Promise<number>;
}

export function inboxOf(home: string): InboxHuman {
  const socket = async () => {
    const [found] = await waitFor('the inbox socket of the running tabward', () => {
      const sockets = listInboxSockets(home);
      return sockets.length ? sockets : undefined;
    });
    return found?.path ?? '';
  };
  const questions = async () =>
    (await socketRequest(await socket(), 'GET', '/questions')).body as QuestionView[];
  return {
    questions,
    pagePort: () =>
      waitFor('the approval page to listen', async () => {
        const status = (await socketRequest(await socket(), 'GET', '/status')).body as { pagePort?: number };
        return status.pagePort ?? undefined;
      }),
    question: (tool, timeoutMs = 30_000) =>
      waitFor(
        `a ${tool} question in tabward approvals`,
        async () => (await questions()).find((q) => q.tool === tool),
        {
          timeoutMs,
        },
      ),
    answer: async (id, decision) =>
      (
        await socketRequest(await socket(), 'POST', '/answer', {
          id,
          decision: typeof decision === 'string' ? { choice: decision } : decision,
        })
      ).status,
  };
}
