// Does an action look destructive? Judged from what a person would read (the element's accessible name or text)
// and where it sends data (its form's action, its link), in English and Chinese. The guard turns the answer into
// a decision (rule 6 under --policy destructive-asks, the recipes' policy).

const destructiveWords = [
  /\b(delete|remove|erase|destroy|purge|wipe)\b/i,
  /\b(refund|chargeback|void|reverse)\b/i,
  /\bcancel\s+(the\s+)?(order|subscription|plan|shipment|payment|account)\b/i,
  /\bconfirm\s+(the\s+)?(shipment|shipping|delivery|payment|order)\b/i,
  /\b(ship|pay|purchase|buy|transfer|withdraw|send money|place order|checkout)\b/i,
  /\b(terminate|deactivate|disable|revoke|close account|unsubscribe|reset)\b/i,
  /删除|移除|清空|退款|退货|取消订单|取消订阅|确认发货|发货|支付|付款|购买|转账|提现|注销|停用|撤销|解绑|重置/,
];

/**
 * Why an action reads as destructive, or undefined: the name a person reads on the element, or the path of a
 * URL it sends data to (a form action, a link). A fact for the guard, which decides what it means.
 */
export function destructiveReason(name: string, targetUrls: readonly string[]): string | undefined {
  if (destructiveWords.some((word) => word.test(name)))
    return `its label "${name.slice(0, 60)}" reads as destructive`;
  for (const url of targetUrls) {
    const path = safePath(url);
    if (destructiveWords.some((word) => word.test(path.replace(/[/_-]+/g, ' '))))
      return `it sends to ${path}`;
  }
  return undefined;
}

function safePath(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname);
  } catch {
    return url;
  }
}
