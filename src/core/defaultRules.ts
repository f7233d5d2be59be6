// The sensitive-page rules that ship with tabward: the list lives in src/protocol/defaultRules.ts, since the
// extension ships it too.

export { defaultRuleSeeds, type RuleSeed } from '../protocol/defaultRules.ts';
