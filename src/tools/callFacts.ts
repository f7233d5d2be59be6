// What the runner knows about one tool call, turned into the guard's facts and the binding an approval is given
// for. Kept apart from the runner so that each is one small function.

import type { ActionFacts } from '../core/callPath.ts';
import { canonicalAction } from '../core/grants.ts';
import { originOf, type SecretUse } from '../core/guard.ts';
import type { Secrets } from '../core/secrets.ts';
import type { Tool, ToolTarget } from './tool.ts';

type Args = Record<string, unknown>;

/** The guard's facts about a tool call, from its declaration, its arguments and the live target. */
export function guardFacts(tool: Tool, args: Args, target: ToolTarget, secrets: Secrets): ActionFacts {
  const uses = secretUses(tool, args, target, secrets);
  return {
    tool: tool.name,
    kind: tool.kind,
    ...(target.tab ? { tab: { id: target.tab.id, ownedByAgent: target.tab.ownedByAgent } } : {}),
    frames: target.frames,
    ...(target.destination ? { destination: target.destination } : {}),
    ...(target.effects ? { effects: target.effects } : {}),
    carriesData: tool.carriesData?.(args) ?? false,
    exportsLocalFiles: tool.exportsLocalFiles === true,
    ...(tool.runsScript ? { runsScript: true } : {}),
    ...(tool.closesTab ? { closesTab: true } : {}),
    ...(tool.attachesUserBrowser ? { attachesUserBrowser: true } : {}),
    repostsForm: target.repostsForm === true,
    ...(uses.length > 0 ? { secrets: uses } : {}),
    touchesTypedSecret: tool.revealsTypedValues === true && target.tab?.holdsTypedSecret === true,
    ...(target.looksDestructive ? { looksDestructive: target.looksDestructive } : {}),
    ...target.siteCall,
  };
}

/** Each secret the call types, judged by the origin of the frame of the field it goes into. */
export function secretUses(tool: Tool, args: Args, target: ToolTarget, secrets: Secrets): SecretUse[] {
  return (tool.secretsUsed?.(args) ?? []).map(({ name, ref }) => {
    // An undeclared name fails here, before anyone is asked about typing it.
    secrets.get(name);
    const frame = target.refFrames?.[ref] ?? target.frames[0];
    const origin = frame ? originOf(frame.url, frame.creatorUrl) : 'an unknown origin';
    const { placement, boundTo } = secrets.placement(name, origin);
    return { name, origin, placement, ...(boundTo.length > 0 ? { boundTo } : {}) };
  });
}

/**
 * Tab, document, origin, destination, the exact action, and the element as the page shows it now (its live
 * name, tag and effects): what one approval is bound to. Anything else at action time asks again.
 */
export function bindingOf(tool: Tool, args: Args, target: ToolTarget): string {
  const tab = target.tab ? `${target.tab.id}#${target.tab.documentSeq}` : '-';
  const origin = target.frames[0] ? originOf(target.frames[0].url, target.frames[0].creatorUrl) : '-';
  const element = JSON.stringify([target.fingerprints ?? {}, target.effects ?? []]);
  return `${tab}|${origin}|${target.destination ?? ''}|${canonicalAction(tool.name, args)}|${element}`;
}
