// What reads as destructive to a person, in English and Chinese: one list for the recipes' click check
// (core/destructive.ts) and for site tools that mark themselves read-only (siteRules.ts), so the relay, the
// extension and the recipe runner judge alike.

export const destructiveWords: readonly RegExp[] = [
  // A verb as a label says it ("Delete") and as a description does ("Deletes old messages").
  /\b(delete|remove|erase|destroy|purge|wipe)s?\b/i,
  /\b(refund|chargeback|void|reverse)s?\b/i,
  /\bcancels?\s+(the\s+)?(order|subscription|plan|shipment|payment|account)\b/i,
  /\bconfirms?\s+(the\s+)?(shipment|shipping|delivery|payment|order)\b/i,
  /\b(ships?|pays?|purchases?|buys?|transfers?|withdraws?|sends? money|places? order|checkout)\b/i,
  /\b(terminates?|deactivates?|disables?|revokes?|closes? account|unsubscribes?|resets?)\b/i,
  /删除|移除|清空|退款|退货|取消订单|取消订阅|确认发货|发货|支付|付款|购买|转账|提现|注销|停用|撤销|解绑|重置/,
];

/**
 * Verbs that change or take something away, as words of a name or an address (`refundOrder`, `/orders/17/refund`):
 * the recipes' address check reads these alone (core/destructive.ts), a site tool's name these and a few more that
 * only a tool's name makes an action of (siteRules.ts).
 */
export const destructiveVerbs = [
  'delete',
  'remove',
  'erase',
  'destroy',
  'purge',
  'wipe',
  'refund',
  'chargeback',
  'void',
  'cancel',
  'revoke',
  'terminate',
  'deactivate',
  'disable',
  'unsubscribe',
  'withdraw',
  'transfer',
  'pay',
  'buy',
  'purchase',
] as const;

/** The first destructive word or phrase in the text, as written there; undefined when none. */
export function destructiveWordIn(text: string): string | undefined {
  for (const word of destructiveWords) {
    const found = word.exec(text);
    if (found) return found[0];
  }
  return undefined;
}
