// save_recipe: the agent's own browsing, saved as a recipe a human can replay with `tabward run`. The file is made
// from the audit log of this session (selectors, URLs, secrets by name: what the log already holds, redacted),
// never from anything the agent passes but a file name, and goes into tabward's own recipes folder (0700, the
// file 0600) without replacing a file there. It touches no page and no account and sends nothing to any origin:
// for the guard it is a read (it reads the log). It is not upload_file's "exports local files", which hands
// files to a page. MCP clients are told it is not read-only (it creates a file) and not destructive.

import { z } from 'zod';
import { TabwardError } from '../core/errors.ts';
import { defineTool, text } from './tool.ts';

export const saveRecipe = defineTool({
  name: 'save_recipe',
  description: "Save this session's successful steps as a recipe file (tabward run).",
  kind: 'read',
  createsOwnFile: true,
  schema: () => z.object({ name: z.string().optional() }),
  target: async () => ({ frames: [] }),
  handle: async (args, context) => {
    if (!context.saveRecipe)
      throw new TabwardError(
        'not_allowed',
        'save_recipe is not available here: this front end keeps no audit log to save from.',
      );
    const saved = context.saveRecipe(args.name);
    const confirm = saved.writes > 0 ? ' --confirm' : '';
    const lines = [
      `Saved ${saved.steps} steps (${saved.writes} marked write) to ${saved.path}.`,
      `A human replays it with: tabward run ${saved.path}${confirm}`,
      ...saved.notes.map((note) => `Note: ${note}.`),
    ];
    return { content: [text(lines.join('\n'))] };
  },
});
