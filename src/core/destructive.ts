// Does a click look destructive? Judged from what a person would read (the element's accessible name or text)
// and where it sends data (its form's action), in English and Chinese, plus the sensitive-page rules.

import type { RuleSet } from './sensitiveRules.ts';

export interface ClickFacts {
  /** Accessible name or visible text of the element. */
  readonly name: string;
  /** The action URL of the form the click submits, if any. */
  readonly formAction?: string;
  /** The page the element is on. */
  readonly pageUrl: string;
}

const destructiveWords = [
  /\b(delete|remove|erase|destroy|purge|wipe)\b/i,
  /\b(refund|chargeback|void|reverse)\b/i,
  /\bcancel\s+(the\s+)?(order|subscription|plan|shipment|payment|account)\b/i,
  /\bconfirm\s+(the\s+)?(shipment|shipping|delivery|payment|order)\b/i,
  /\b(ship|pay|purchase|buy|transfer|withdraw|send money|place order|checkout)\b/i,
  /\b(terminate|deactivate|disable|revoke|close account|unsubscribe|reset)\b/i,
  /删除|移除|清空|退款|退货|取消订单|取消订阅|确认发货|发货|支付|付款|购买|转账|提现|注销|停用|撤销|解绑|重置/,
];

export interface DestructiveVerdict {
  readonly destructive: boolean;
  readonly why?: string;
}

export function judgeClick(facts: ClickFacts, rules: RuleSet): DestructiveVerdict {
  const byName = destructiveWords.find((word) => word.test(facts.name));
  if (byName)
    return { destructive: true, why: `its label "${facts.name.slice(0, 60)}" reads as destructive` };
  const actionPath = facts.formAction ? safePath(facts.formAction) : '';
  const byAction =
    actionPath && destructiveWords.find((word) => word.test(actionPath.replace(/[/_-]+/g, ' ')));
  if (byAction) return { destructive: true, why: `its form posts to ${actionPath}` };
  const sensitive =
    rules.match(facts.pageUrl) ?? (facts.formAction ? rules.match(facts.formAction) : undefined);
  if (sensitive) return { destructive: true, why: `the page matches the sensitive rule ${sensitive.rule}` };
  return { destructive: false };
}

function safePath(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname);
  } catch {
    return url;
  }
}
