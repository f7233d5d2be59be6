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

/**
 * A name or an address's part split into words: `deleteAllItems`, `delete_all`, `delete-all`, `delete2Items` all
 * read "delete all ...". Compatibility forms, accents and characters that show nothing (`ｄｅｌｅｔｅ`, `déleté`,
 * `del\u200bete`) are taken away first: a page could hide a word's letters apart.
 */
export function nameWords(name: string): string {
  return name
    .normalize('NFKC')
    .normalize('NFD')
    .replace(/[\p{Cf}\p{Cc}\p{Default_Ignorable_Code_Point}\p{M}]/gu, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/(\p{L})(\p{N})|(\p{N})(\p{L})/gu, '$1$3 $2$4')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** nameWords, lower-cased, one word an entry. */
export function wordsOf(text: string): string[] {
  return nameWords(text).toLowerCase().split(' ').filter(Boolean);
}

/** Forms of a verb that are mostly nouns in a name (`getShippingRates`). */
const nounForms = new Set(['shipping']);

/**
 * `word` is `verb` or its -ing form (refunding, removing); with `inflected`, any form of it (deletes, deleted,
 * dropped, submitting). An address goes by the first only: `/transfers`, `/orders/cancelled` are pages to read.
 */
export function isVerbForm(word: string, verb: string, inflected: boolean): boolean {
  if (nounForms.has(word)) return false;
  if (word === verb || word === `${verb.endsWith('e') ? verb.slice(0, -1) : verb}ing`) return true;
  if (!inflected || !word.startsWith(verb)) return false;
  const doubled = verb.at(-1) ?? '';
  return ['s', 'es', 'd', 'ed', `${doubled}ed`, `${doubled}ing`].includes(word.slice(verb.length));
}

/** The first destructive word or phrase in the text, as written there; undefined when none. */
export function destructiveWordIn(text: string): string | undefined {
  for (const word of destructiveWords) {
    const found = word.exec(text);
    if (found) return found[0];
  }
  return undefined;
}
