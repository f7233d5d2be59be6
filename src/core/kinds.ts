// Vocabulary shared by the guard and every front end: what a tool may do, and which browser mode is live.

export const toolKinds = ['read', 'navigate', 'write', 'mode'] as const;
export type ToolKind = (typeof toolKinds)[number];

export const browserModes = ['isolated', 'shared', 'remote'] as const;
export type BrowserMode = (typeof browserModes)[number];

/**
 * How strict rule 6 of the guard is for ordinary (not sensitive) writes: default (ask outside the isolated
 * browser), strict (always ask), sensitive-only (never), destructive-asks (only writes that read as destructive:
 * delete, refund, pay...; what recipes run under).
 */
export const writePolicies = ['default', 'strict', 'sensitive-only', 'destructive-asks'] as const;
export type WritePolicy = (typeof writePolicies)[number];

/**
 * The tool categories `--tools` turns on: core (always; the browser tools every agent needs) and devtools
 * (console, network requests, emulation: off by default, since every tool listed costs tokens on every turn).
 */
export const toolCategories = ['core', 'devtools'] as const;
export type ToolCategory = (typeof toolCategories)[number];
