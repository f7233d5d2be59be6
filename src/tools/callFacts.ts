// What the runner knows about one call, turned into the guard's facts, the binding an approval is given for,
// and the network pass an approval opens. Kept apart from the runner so that each is one small function.

import type { PassSpec } from '../core/actionPasses.ts';
import { writeTargetOf } from '../core/actionPasses.ts';
import { canonicalAction } from '../core/grants.ts';
import { type Decision, type GuardFacts, originOf, type SecretUse } from '../core/guard.ts';
import type { BrowserMode, WritePolicy } from '../core/kinds.ts';
import type { Secrets } from '../core/secrets.ts';
import type { Tool, ToolTarget } from './tool.ts';

type Args = Record<string, unknown>;

export interface CallState {
  readonly mode: BrowserMode;
  readonly policy: WritePolicy;
  readonly taintedOrigins: readonly string[];
  readonly approveAll: boolean;
  readonly secrets: Secrets;
}

export function guardFacts(tool: Tool, args: Args, target: ToolTarget, state: CallState): GuardFacts {
  const secrets = secretUses(tool, args, target, state.secrets);
  return {
    tool: tool.name,
    kind: tool.kind,
    mode: state.mode,
    ...(target.tab ? { tab: { id: target.tab.id, ownedByAgent: target.tab.ownedByAgent } } : {}),
    frames: target.frames,
    ...(target.destination ? { destination: target.destination } : {}),
    ...(target.effects ? { effects: target.effects } : {}),
    carriesData: tool.carriesData?.(args) ?? false,
    exportsLocalFiles: tool.exportsLocalFiles === true,
    repostsForm: target.repostsForm === true,
    ...(secrets.length > 0 ? { secrets } : {}),
    touchesTypedSecret: tool.runsScript === true && target.tab?.holdsTypedSecret === true,
    taintedOrigins: state.taintedOrigins,
    policy: state.policy,
    approveAll: state.approveAll,
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

/**
 * The requests an approved action may send to sensitive pages: toward the links and form actions the human
 * saw; with none predicted (a script button, a script), to the origin of the page it acts on; and navigations
 * within those origins (a redirect after a post, the approved destination).
 */
export function passFor(target: ToolTarget, decision: Decision): PassSpec | undefined {
  if (decision.verdict !== 'ask' || !decision.sensitive) return undefined;
  const frameOrigins = target.frames.slice(0, 1).map((frame) => originOf(frame.url, frame.creatorUrl));
  const effects = target.effects ?? [];
  const writeTargets = [target.destination, ...effects.map((effect) => effect.url)].flatMap((url) => {
    const key = url ? writeTargetOf(url) : undefined;
    return key ? [key] : [];
  });
  const navigationOrigins = [
    ...(target.destination ? [originOf(target.destination)] : []),
    ...effects.map((effect) => originOf(effect.url)),
    ...frameOrigins,
  ];
  const scriptLike = effects.length === 0 && !target.destination;
  return { writeTargets, writeOrigins: scriptLike ? frameOrigins : [], navigationOrigins };
}
