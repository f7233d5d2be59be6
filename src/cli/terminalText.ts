// JSON the CLI writes to a terminal, holding what pages, sites and recipe authors chose (a recipe's selectors, a page's
// button names, a site tool's error, a model's answer): nothing in it may move the cursor, clear the screen, set a
// scroll region or retitle the window over what the human reads next (docs/security.md, "Escape codes"). Lines
// go through core/displayText.ts visibleLines.

/**
 * JSON as a terminal may show it: JSON escapes C0 controls (ESC among them) but leaves C1 controls (U+009B is a
 * CSI to some terminals) and line separators as they are; they are escaped too, and the JSON means the same.
 */
export function terminalJson(value: unknown, indent = 2): string {
  return terminalJsonText(JSON.stringify(value, null, indent || undefined));
}

/** JSON text made already (a saved recipe's), escaped the same way. */
export function terminalJsonText(json: string): string {
  return json.replace(
    /[\u0080-\u009f\u2028\u2029]/g,
    (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}
