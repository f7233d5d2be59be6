// A relay site tool call as guard facts (the verdict itself is core/guard.ts's, so a rule change there reaches
// relay calls). The kind follows the page's read-only hint only when the tool's name and description do not read
// as destructive (and then the question says why it asks); the frame is the document the extension says will run
// the call, never the URL the site last announced; the standing "always allow" of the workspace is a fact the
// guard weighs after sensitive pages.

import { distrustedHint, type HintedTool, nameWords } from '../protocol/siteRules.ts';
import type { ActionFacts } from './callPath.ts';
import { destructiveReason } from './destructive.ts';
import type { FrameFact } from './guard.ts';

export interface SiteCallInput {
  /** The tool as the page declared it. */
  readonly tool: HintedTool;
  /** The URL of the document that will run the call, as the extension reports it before running it. */
  readonly documentUrl: string;
  /** The human chose "always allow" for this tool on this site, in the caller's workspace. */
  readonly standingAllow: boolean;
}

export function siteCallFacts(input: SiteCallInput): ActionFacts {
  const distrusted = distrustedHint(input.tool);
  const readOnly = input.tool.readOnly && distrusted === undefined;
  return {
    tool: input.tool.name,
    kind: readOnly ? 'read' : 'write',
    frames: [{ url: input.documentUrl }],
    // The arguments go to the page's own code: they may carry data to the site.
    carriesData: true,
    site: {
      standingPermission: input.standingAllow ? 'always' : 'ask',
      ...(distrusted ? { distrustedHint: distrusted } : {}),
    },
  };
}

/**
 * The same call from tabward's own MCP server on the agent's tab (call_site_tool): judged on the tab's frames,
 * with no standing choice, so after sensitive pages it is judged like a click (mode, policy, approve-all grants);
 * a name or description that reads as destructive counts under --policy destructive-asks.
 */
export function tabSiteCallFacts(
  tool: SiteCallInput['tool'] & { readonly description: string },
  frames: readonly FrameFact[],
): Pick<ActionFacts, 'kind' | 'frames' | 'carriesData' | 'site' | 'looksDestructive'> {
  const judged = siteCallFacts({ tool, documentUrl: frames[0]?.url ?? '', standingAllow: false });
  const { standingPermission: _none, ...site } = judged.site ?? {};
  const destructive = destructiveReason(`${nameWords(tool.name)}: ${tool.description}`, []);
  return {
    kind: judged.kind,
    frames,
    carriesData: judged.carriesData,
    site,
    ...(destructive ? { looksDestructive: destructive } : {}),
  };
}
