// The browser tool catalogue: every tool, once, in the order agents see them.

import { click, drag, fill, fillForm, hover, pressKey, uploadFile } from './inputTools.ts';
import { browserConnect, browserDisconnect, browserStatus } from './modeTools.ts';
import { closePage, listPages, navigatePage, newPage, resizePage, selectPage } from './pageTools.ts';
import { takeScreenshot, takeSnapshot, waitFor } from './readTools.ts';
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
  browserStatus,
  browserConnect,
  browserDisconnect,
];
