// The element an action is about to act on, as a saved recipe can find it again after a reload: the first of its
// selector candidates (core/durableSelectors.ts) that finds this element and no other. A test id, id or field name
// was checked in the page by the ref's lookup (elementHooks.ts); a role and name is checked here with Playwright's
// own engine, the one recipe steps run through, before the action can change the page. Never fails the action: an
// element with no such selector is recorded as not replayable.

import type { AuditTarget } from '../core/audit.ts';
import { destructiveReason } from '../core/destructive.ts';
import { roleSelector, selectorCandidates } from '../core/durableSelectors.ts';
import { withDeadline } from './deadline.ts';
import type { ResolvedElement } from './elements.ts';

/** `typing`: the action types into the element (a field's label says nothing about what typing does). */
export async function durableTarget(
  element: ResolvedElement,
  typing: boolean,
  timeoutMs: number,
): Promise<AuditTarget> {
  const destructive = typing ? undefined : destructiveReason(element.liveName, element.effects);
  const facts = { tag: element.tag, ...(destructive ? { destructive } : {}) };
  if (element.frames.length > 1) return { ...facts, unreplayable: 'it is inside a frame' };
  const candidates = selectorCandidates({
    tag: element.tag,
    ...element.hooks,
    role: element.info.role,
    name: element.info.name,
  });
  const checked = candidates.find((candidate) => candidate.checked);
  if (checked) return { ...facts, selector: checked.selector };
  // The snapshot's name may be older than the page's: the live one is worth a try too.
  const roles = [...candidates.map((candidate) => candidate.selector)];
  const live = roleSelector(element.info.role, element.liveName);
  if (live && !roles.includes(live)) roles.push(live);
  try {
    for (const selector of roles)
      if (await withDeadline(findsItAlone(element, selector), timeoutMs, 'checking a selector'))
        return { ...facts, selector };
    return { ...facts, unreplayable: 'no test id, id, field name or role and name finds it alone' };
  } catch {
    return { ...facts, unreplayable: 'its selector could not be checked' };
  }
}

/** One element in the page matches the selector, and it is this one (both counted at once). */
async function findsItAlone(element: ResolvedElement, selector: string): Promise<boolean> {
  const matches = element.locator.page().locator(selector);
  const [all, this_] = await Promise.all([matches.count(), element.locator.and(matches).count()]);
  return all === 1 && this_ === 1;
}
