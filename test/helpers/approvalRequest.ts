// One approval question for approver tests: a click on a sensitive bank page unless a test says otherwise.

import type { ApprovalRequest } from '../../src/core/approvals.ts';

export function approvalRequest(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    id: 'a1',
    tool: 'click',
    kind: 'write',
    reason: 'writes on sensitive pages need a fresh approval',
    rule: '*://bank.example/*',
    sensitive: true,
    approveAllAllowed: false,
    url: 'https://bank.example/pay',
    origin: 'https://bank.example',
    element: { role: 'button', name: 'Pay' },
    args: { ref: 'e3' },
    frontEnd: 'mcp',
    ...overrides,
  };
}
