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
