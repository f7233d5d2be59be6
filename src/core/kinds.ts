// Vocabulary shared by the guard and every front end: what a tool may do, and which browser mode is live.

export const toolKinds = ['read', 'navigate', 'write', 'mode'] as const;
export type ToolKind = (typeof toolKinds)[number];

export const browserModes = ['isolated', 'shared', 'remote'] as const;
export type BrowserMode = (typeof browserModes)[number];

/** How strict rule 6 of the guard is for ordinary (not sensitive) writes. */
export const writePolicies = ['default', 'strict', 'sensitive-only'] as const;
export type WritePolicy = (typeof writePolicies)[number];
