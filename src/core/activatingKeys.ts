// Which key presses activate what has the focus by themselves (follow a link, press a button, submit a form): the
// others have no effect an approval could be given for (tools/inputTools.ts press_key, recipes/steps.ts press).

/**
 * Whether a key press (`Enter`, `Shift+Enter`, `Space`, `" "`) activates what has the focus. A key that cannot be
 * read as one (a trailing `+`) counts as one: an action judged with effects asks more, never less.
 */
export function activatingKey(key: string): boolean {
  const last = key.split('+').at(-1)?.trim().toLowerCase() ?? '';
  return ['enter', 'numpadenter', 'space', 'spacebar', ''].includes(last);
}

/**
 * Whether a key press pastes: Control/Meta+V (any Shift or Alt with it), Shift+Insert, the Paste key. The browser
 * has one clipboard for all its contexts (every agent of `mcp --http`, every recipe run of `serve`) and, with a
 * window, the user's desktop's: a paste would hand one agent what another's page copied (docs/security.md).
 */
export function pasteKey(key: string): boolean {
  // A modifier by its side (ControlLeft, ShiftRight) holds that modifier down as well.
  const parts = key.split('+').map((part) =>
    part
      .trim()
      .toLowerCase()
      .replace(/(?<=.)(left|right)$/, ''),
  );
  const last = parts.at(-1) ?? '';
  const modifiers = new Set(parts.slice(0, -1));
  if (last === 'paste') return true;
  if (last === 'insert' && modifiers.has('shift')) return true;
  const commandKey = ['control', 'meta', 'controlormeta', 'ctrl', 'cmd', 'command'].some((name) =>
    modifiers.has(name),
  );
  return commandKey && (last === 'v' || last === 'keyv');
}

/** Why a paste is refused, for every front end alike. */
export const pasteRefused =
  "Pasting is not available: the browser's clipboard is shared with other agents' pages (and, with a window, your desktop). Type the text with fill or press_key instead.";
