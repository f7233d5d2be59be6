// The popup: pairing, sharing the current site, approving waiting calls, and the workspace's live activity by
// agent and task.
// It holds no state of its own: every second it asks the service worker, and every button is a request. Text a
// page or an agent chose (tool names, descriptions, arguments, activity) is shown through forDisplay.

import {
  exactText,
  forDisplay,
  hasMixedScripts,
  mixedScriptsWarning,
} from '../../src/protocol/displayText.ts';
import { shownArgsLine } from '../../src/protocol/shownArgs.ts';
import { distrustedHint } from '../../src/protocol/siteRules.ts';
import type { PopupRequest, SiteTool } from '../../src/protocol/siteTools.ts';
import { type CallView, groupActivity } from './activityGroups.ts';
import type { PopupReply, PopupState } from './worker/popupState.ts';

const byId = <T extends HTMLElement>(id: string): T => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`popup.html lacks #${id}`);
  return element as T;
};

// `?tab=N` shows another tab's site (the popup opened as a page, as in tests); else the active tab.
async function targetTab(): Promise<number | undefined> {
  const fromQuery = Number(new URLSearchParams(location.search).get('tab'));
  if (Number.isInteger(fromQuery) && fromQuery > 0) return fromQuery;
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return tab?.id;
}

/**
 * Sends the popup's request and shows the state it gets back. A user's action replaces the message shown (its
 * error, or none); the once-a-second refresh only shows an error of its own: a message the user still has to act on
 * (the command that revokes a browser the relay could not be told of) stays until their next action.
 */
async function request(message: PopupRequest): Promise<void> {
  const reply = (await chrome.runtime.sendMessage(message)) as PopupReply;
  if (message.type !== 'state' || !reply.ok) byId('error').textContent = reply.ok ? '' : reply.error;
  if (reply.ok) render(reply.state);
}

function item(text: string, className = ''): HTMLLIElement {
  const li = document.createElement('li');
  li.textContent = text;
  if (className) li.className = className;
  return li;
}

function button(label: string, className: string, onClick: () => void): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.textContent = label;
  element.className = className;
  element.addEventListener('click', onClick);
  return element;
}

function render(state: PopupState): void {
  const link = byId('link');
  link.textContent = state.paired ? state.link.status : 'not paired';
  link.className = `status ${state.link.status}`;
  link.title = state.link.error;
  byId('pairing').hidden = state.paired;
  byId('unpair').hidden = !state.paired;
  byId('workspace').textContent = state.paired ? `Workspace ${state.workspace} · ${state.relayUrl}` : '';
  const site = state.current;
  shownOrigin = site?.origin ?? '';
  byId('site').hidden = !state.paired || !site;
  if (site) {
    byId('site-origin').textContent = site.shareable
      ? site.origin
      : 'This page cannot be shared (http and https only).';
    byId('share').hidden = !site.shareable || site.shared;
    byId('unshare').hidden = !site.shared;
    byId('site-tools').replaceChildren(
      ...(site.shared && !site.tools.length
        ? [
            item(
              'No tools seen yet. If the site loads WebMCP with a script library, reload this tab.',
              'empty',
            ),
          ]
        : site.tools.map((t) =>
            item(`${forDisplay(t.name)}${hintLabel(t)}: ${forDisplay(t.description, 300)}`),
          )),
    );
  }
  renderAlerts(state);
  renderPending(state);
  renderNotes(state);
  renderActivity(state);
}

/** Each agent's calls, newest first, with the live state of each (the relay's lines and this popup's questions). */
function renderActivity(state: PopupState): void {
  const groups = groupActivity(state.activity, state.pending);
  byId('activity').replaceChildren(
    ...(groups.length
      ? groups.map((group) => {
          const section = document.createElement('section');
          section.className = 'agent';
          section.dataset.agent = group.agent;
          const title = document.createElement('h3');
          title.textContent = forDisplay(group.agent, 60);
          const calls = document.createElement('ul');
          calls.append(...group.calls.map(callItem));
          section.append(title, calls);
          return section;
        })
      : [Object.assign(document.createElement('p'), { className: 'empty', textContent: 'No calls yet.' })]),
  );
}

function callItem(call: CallView): HTMLLIElement {
  const li = item('', `call ${call.state.replace(/ /g, '-')}`);
  li.dataset.task = call.taskId;
  li.dataset.state = call.state;
  const head = document.createElement('div');
  const state = document.createElement('span');
  state.className = 'state';
  state.textContent = call.state;
  head.append(state, ` ${forDisplay(call.tool, 80)} on ${forDisplay(call.site, 80)}`);
  const task = document.createElement('div');
  task.className = 'task';
  task.textContent = `${call.at.slice(11, 19)} ${call.taskId} · ${call.trail.join(' → ')}`;
  const detail = document.createElement('div');
  detail.className = 'detail';
  detail.textContent = forDisplay(call.detail, 200);
  li.append(head, task, detail);
  return li;
}

let shownOrigin = '';

/** A read-only hint is shown as believed only when the extension believes it, else with why it asks anyway. */
function hintLabel(tool: SiteTool): string {
  if (!tool.readOnly) return '';
  const distrusted = distrustedHint(tool);
  return distrusted ? ` (asks anyway: ${forDisplay(distrusted, 200)})` : ' (read-only)';
}

// Rebuilt only when the waiting calls change: a button must not vanish under the human's click.
let shownPending = '';

function renderPending(state: PopupState): void {
  const key = state.pending.map((p) => p.taskId).join(' ');
  if (key === shownPending && key) return;
  shownPending = key;
  const list = byId('pending');
  if (!state.pending.length) {
    list.replaceChildren(item('Nothing waits.', 'empty'));
    return;
  }
  list.replaceChildren(
    ...state.pending.map((p) => {
      const li = item('', 'approval');
      li.dataset.task = p.taskId;
      const title = document.createElement('div');
      title.textContent = `${forDisplay(p.agent)} wants to call ${forDisplay(p.tool)} on ${forDisplay(p.site)}`;
      const task = document.createElement('div');
      task.className = 'task';
      task.textContent = p.taskId;
      const where = document.createElement('div');
      where.className = p.sensitive ? 'where sensitive' : 'where';
      where.textContent = `in ${forDisplay(p.url, 200)}: ${forDisplay(p.reason, 300)}`;
      const args = document.createElement('pre');
      args.textContent = displayArgs(p.args);
      const decide = (decision: 'approved' | 'denied' | 'always') => () =>
        void request({ type: 'decide', taskId: p.taskId, decision });
      li.append(
        title,
        task,
        where,
        args,
        button('Approve', 'approve', decide('approved')),
        button('Deny', 'deny', decide('denied')),
      );
      // Never offered for a sensitive page: every call there asks.
      if (p.approveAllAllowed)
        li.append(
          button(
            `Always allow ${forDisplay(p.tool)} on this site, for every agent`,
            'secondary always',
            decide('always'),
          ),
        );
      return li;
    }),
  );
}

/** Questions withdrawn before the human answered, and tools agents do not see, each with why. */
/** The pairing's own troubles first: a revoked pairing, another connection speaking for this browser. */
function renderAlerts(state: PopupState): void {
  const revoked = state.paired && state.link.status === 'revoked' ? [item(state.link.error, 'alert')] : [];
  byId('alerts').replaceChildren(
    ...revoked,
    ...[...state.alerts]
      .reverse()
      .map((a) => item(`${new Date(a.at).toLocaleTimeString()}: ${forDisplay(a.message, 400)}`, 'alert')),
  );
}

function renderNotes(state: PopupState): void {
  byId('withdrawn').replaceChildren(
    ...[...state.withdrawn]
      .reverse()
      .map((w) =>
        item(
          `Withdrawn: ${forDisplay(w.tool)} on ${forDisplay(w.site)} for ${forDisplay(w.agent)} [${forDisplay(w.taskId)}]: ${forDisplay(w.reason, 300)}`,
          'withdrawn',
        ),
      ),
  );
  const dropped = state.dropped.filter((d) => d.origin === shownOrigin);
  byId('dropped').replaceChildren(
    ...(state.reportNote ? [item(forDisplay(state.reportNote, 300), 'dropped')] : []),
    ...dropped.map((d) => {
      const names = d.tools.slice(0, 8).map((name) => forDisplay(name, 60));
      const more = d.tools.length > names.length ? ` and ${d.tools.length - names.length} more` : '';
      return item(
        `${d.tools.length} tool(s) not offered to agents (${forDisplay(d.why, 200)}): ${names.join(', ')}${more}`,
        'dropped',
      );
    }),
  );
}

// One line per argument, each value whole and made visible (protocol/shownArgs.ts): a page-chosen string cannot
// repaint the box, and nothing the human approves is cut from it (a call whose arguments do not fit is not asked).
function displayArgs(args: unknown): string {
  // A look-alike letter (a Cyrillic о in an address) is flagged here as on every other channel.
  const flag = hasMixedScripts(JSON.stringify(args) ?? '') ? `\n${mixedScriptsWarning.trim()}` : '';
  if (typeof args !== 'object' || args === null) return `${shownArgsLine(args)}${flag}`;
  return `${Object.entries(args)
    .map(([key, value]) => `${exactText(key)}: ${shownArgsLine(value)}`)
    .join('\n')}${flag}`;
}

async function start(): Promise<void> {
  const tabId = await targetTab();
  byId('pair').addEventListener('click', () => {
    const relayUrl = byId<HTMLInputElement>('relay-url').value;
    const code = byId<HTMLInputElement>('pair-code').value;
    void request({ type: 'pair', relayUrl, code });
  });
  byId('unpair').addEventListener('click', () => void request({ type: 'unpair' }));
  byId('share').addEventListener(
    'click',
    () => tabId !== undefined && void request({ type: 'share', tabId }),
  );
  byId('unshare').addEventListener('click', () => void request({ type: 'unshare', origin: shownOrigin }));
  const refresh = (): Promise<void> =>
    request(tabId !== undefined ? { type: 'state', tabId } : { type: 'state' });
  await refresh();
  setInterval(() => void refresh(), 1000);
}

void start();
