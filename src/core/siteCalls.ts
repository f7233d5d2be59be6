// A relay site tool call as guard facts (the verdict itself is core/guard.ts's, so a rule change there reaches
// relay calls). The kind follows the page's read-only hint only when the tool's name does not read as
// destructive; the frame is the document the extension says will run the call, never the URL the site last
// announced; the standing "always allow" of the workspace is a fact the guard weighs after sensitive pages.

import { trustedReadOnly } from '../protocol/siteRules.ts';
import type { ActionFacts } from './callPath.ts';

export interface SiteCallInput {
  /** The tool as the page declared it. */
  readonly tool: { readonly name: string; readonly readOnly: boolean };
  /** The URL of the document that will run the call, as the extension reports it before running it. */
  readonly documentUrl: string;
  /** The human chose "always allow" for this tool on this site, in the caller's workspace. */
  readonly standingAllow: boolean;
}

export function siteCallFacts(input: SiteCallInput): ActionFacts {
  const readOnly = trustedReadOnly(input.tool);
  return {
    tool: input.tool.name,
    kind: readOnly ? 'read' : 'write',
    frames: [{ url: input.documentUrl }],
    // The arguments go to the page's own code: they may carry data to the site.
    carriesData: true,
    site: { standingPermission: input.standingAllow ? 'always' : 'ask' },
  };
}
