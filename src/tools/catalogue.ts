// The browser tool catalogue: every tool, once, in the order agents see them: the core set always, the devtools
// set with `--tools core,devtools`.

import type { ToolCategory } from '../core/kinds.ts';
import { devtoolsTools } from './devtoolsTools.ts';
import { listDownloads } from './downloadTools.ts';
import { click, drag, fill, fillForm, hover, pressKey, uploadFile } from './inputTools.ts';
import { browserConnect, browserDisconnect, browserStatus } from './modeTools.ts';
import { closePage, listPages, navigatePage, newPage, resizePage, selectPage } from './pageTools.ts';
import { takeScreenshot, takeSnapshot, waitFor } from './readTools.ts';
import { saveRecipe } from './recipeTools.ts';
import { evaluateScript, handleDialog } from './scriptTools.ts';
import { callSiteTool, listSiteTools } from './siteTools.ts';
import type { Tool } from './tool.ts';

export const browserTools: readonly Tool[] = [
  listPages,
  selectPage,
  newPage,
  closePage,
  navigatePage,
  takeSnapshot,
  takeScreenshot,
  waitFor,
  listDownloads,
  click,
  fill,
  fillForm,
  hover,
  drag,
  pressKey,
  handleDialog,
  uploadFile,
  evaluateScript,
  listSiteTools,
  callSiteTool,
  resizePage,
  saveRecipe,
  browserStatus,
  browserConnect,
  browserDisconnect,
];

/** The tools of the categories turned on (`--tools`): core always, then devtools when asked for. */
export function toolsFor(categories: readonly ToolCategory[]): readonly Tool[] {
  return categories.includes('devtools') ? [...browserTools, ...devtoolsTools] : browserTools;
}
