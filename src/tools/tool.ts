// How a browser tool is declared: as data (name, description, kind, zod schema) plus two functions over
// browser/: `target` reports the live facts the guard decides on, `handle` does the work. Front ends never
// call `handle` directly; they go through the ToolRunner, which runs the guard first.

import type { z } from 'zod';
import type { KnownToAgent } from '../browser/elements.ts';
import type { RefInfo, TrackedPage } from '../browser/pages.ts';
import type { BrowserSession } from '../browser/session.ts';
import type { AuditTarget } from '../core/audit.ts';
import type { ActionFacts } from '../core/callPath.ts';
import type { Effect, FrameFact } from '../core/guard.ts';
import type { ToolEffects, ToolKind } from '../core/kinds.ts';
import type { LoginWallVerdict } from '../core/loginWall.ts';
import type { Secrets } from '../core/secrets.ts';

export interface ToolContext {
  readonly session: BrowserSession;
  readonly secrets: Secrets;
  /** Deadline for one browser step; navigations get twice as long. */
  readonly timeoutMs: number;
  /** Saves this session's successful steps as a recipe file (save_recipe); absent where no audit log is kept. */
  readonly saveRecipe?: (name: string | undefined) => SavedRecipe;
  /**
   * tabward's own files, which no page is handed (upload_file): its home (the audit log, other agents' downloads,
   * passkeys, tokens), the audit log and the secrets file wherever they are; `own` is the folder this agent's
   * downloads land in, which is its to hand on where it lies inside one of them.
   */
  readonly ownFiles?: { readonly private: readonly string[]; readonly own: string };
}

export interface SavedRecipe {
  readonly path: string;
  readonly steps: number;
  /** Steps marked `write`: the saved recipe runs only with --confirm. */
  readonly writes: number;
  /** Calls that could not be saved, and why. */
  readonly notes: readonly string[];
}

/** What the call will act on, as the browser reports it right now. */
export interface ToolTarget {
  readonly tab?: TrackedPage;
  readonly frames: readonly FrameFact[];
  readonly destination?: string;
  /** The element acted on, by role and accessible name (what a person sees, and what approvals show). */
  readonly element?: Pick<RefInfo, 'role' | 'name'>;
  readonly effects?: readonly Effect[];
  /**
   * The element as it is now (live name, tag, effects), not as the last snapshot showed it: an approval is bound
   * to it, and it is compared again just before acting.
   */
  readonly fingerprints?: Readonly<Record<string, string>>;
  /** The frame each ref lives in: a secret is judged by the frame of the field it is typed into. */
  readonly refFrames?: Readonly<Record<string, FrameFact>>;
  /**
   * What the agent knows of a value (a literal it typed, a declared secret's), as the element was judged with it
   * (browser/elements.ts KnownToAgent): looked up again with the same, it compares alike.
   */
  readonly passwordsKnown?: KnownToAgent;
  /** Fields whose typed value is a secret by what the page says of them (password, one-time code), by ref. */
  readonly secretFields?: Readonly<Record<string, string>>;
  /**
   * Arguments the audit record keeps masked (a key pressed into a password field is a character of the password);
   * the human is asked with them as they are.
   */
  readonly maskedArgs?: readonly string[];
  /** A reload or history move that would send a POST again. */
  readonly repostsForm?: boolean;
  /** The history entry a back or forward move was judged by (CDP's id): the move goes to it and nowhere else. */
  readonly historyEntryId?: number;
  /** Where a drag drops what it drags, by role and name (the element is what it drags). */
  readonly dropOnto?: { readonly role: string; readonly name: string };
  /** For a tool writing several values (fill_form): each field, by role and name, and the frame it is in. */
  readonly fields?: readonly { readonly field: string; readonly frame: string }[];
  /**
   * Why the action reads as destructive (what a person reads on the element or dialog it answers, where it sends),
   * when it does: a site grant never covers it, and it asks under --policy destructive-asks.
   */
  readonly looksDestructive?: string;
  /** What a call of a page's own WebMCP tool is (call_site_tool): its kind comes from the tool, not the call. */
  readonly siteCall?: Pick<ActionFacts, 'kind' | 'carriesData' | 'site' | 'looksDestructive'>;
}

export type ToolContent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly data: string; readonly mimeType: string };

export interface ToolResult {
  readonly content: ToolContent[];
  /** For the audit: each element acted on (by ref), as a selector a saved recipe finds it by. */
  readonly targets?: Readonly<Record<string, AuditTarget>>;
  /**
   * Arguments the audit keeps masked, known once the tool acted (a key pressed into a field the page made a
   * password field as it took the focus); added to the target's maskedArgs.
   */
  readonly maskedArgs?: readonly string[];
  /** Set by navigating tools when the page they reached looks like a login wall. */
  readonly loginWall?: {
    readonly url: string;
    readonly verdict: LoginWallVerdict;
    readonly tab: TrackedPage;
  };
  /** The tabs whose content (text, titles, URLs) this result shows; every sensitive frame of them taints. */
  readonly readFrom?: readonly TrackedPage[];
  /**
   * The pages whose content this result shows that may no longer be open (a console message or a request of an
   * earlier page of a tab): each a sensitive rule matches taints by its origin.
   */
  readonly readUrls?: readonly string[];
}

/** A tool: its name, kind, schema and the effects it declares (core/kinds.ts), which the guard and runner go by. */
export interface Tool<Schema extends z.ZodObject = z.ZodObject> extends ToolEffects {
  readonly name: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly schema: Schema;
  /** Whether this call can carry data to its target (rule 5 of the guard). */
  readonly carriesData?: (args: z.infer<Schema>) => boolean;
  /** The secrets this call would type, each with the ref of the field it goes into. */
  readonly secretsUsed?: (args: z.infer<Schema>) => readonly { name: string; ref: string }[];
  /** The call hands local files to the page. */
  readonly exportsLocalFiles?: boolean;
  /** The call can show the agent what was typed into the page (a script, a screenshot). */
  readonly revealsTypedValues?: boolean;
  /** The call runs the agent's own script in the page: it can reach any page of the origin. */
  readonly runsScript?: boolean;
  /**
   * The call creates a file of tabward's own (save_recipe): no page, account or origin is touched, so the guard
   * judges it by its kind, but MCP clients are not told it only reads.
   */
  readonly createsOwnFile?: boolean;
  readonly target: (args: z.infer<Schema>, context: ToolContext) => Promise<ToolTarget>;
  readonly handle: (args: z.infer<Schema>, context: ToolContext, target: ToolTarget) => Promise<ToolResult>;
}

/** A tool as written: its arguments' schema made by a function, which zod runs when the schema is first used. */
export type ToolDefinition<Schema extends z.ZodObject> = Omit<Tool<Schema>, 'schema'> & {
  readonly schema: () => Schema;
};

/**
 * Building every tool's schema cost `tabward mcp` ~10 ms before its first reply; tools/list is answered from
 * mcp/toolsList.ts (written from these schemas, checked by a test), so a schema is built for a tool's first call.
 */
export function defineTool<Schema extends z.ZodObject>(definition: ToolDefinition<Schema>): Tool {
  let built: Schema | undefined;
  const tool = {
    ...definition,
    get schema() {
      built ??= definition.schema();
      return built;
    },
  };
  return tool as unknown as Tool;
}

export function text(value: string): ToolContent {
  return { type: 'text', text: value };
}
