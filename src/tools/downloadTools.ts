// list_downloads: the files the agent's actions downloaded this session, kept in its own folder (browser/downloads.ts).

import { z } from 'zod';
import { describeDownload } from '../browser/downloads.ts';
import { defineTool, text } from './tool.ts';

export const listDownloads = defineTool({
  name: 'list_downloads',
  description: "Files the agent's actions downloaded: name, size, type, path, first lines.",
  kind: 'read',
  schema: () => z.object({}),
  target: async () => ({ frames: [] }),
  handle: async (_args, { session }) => {
    const keeper = session.downloads;
    if (!keeper) return { content: [text('This session keeps no downloads.')] };
    const files = keeper.list();
    if (files.length === 0) return { content: [text(`No downloads yet (they go to ${keeper.folder}).`)] };
    return { content: [text(files.map(describeDownload).join('\n'))] };
  },
});
