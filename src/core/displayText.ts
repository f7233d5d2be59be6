// Page-derived text made safe to show a human. The implementation lives in protocol/ so the extension shares
// it; the Node layers import it from here.

export {
  codePointMark,
  defaultDisplayChars,
  forDisplay,
  hasMixedScripts,
  mixedScriptsWarning,
  quotedForDisplay,
  visibleLines,
  visibleText,
} from '../protocol/displayText.ts';
