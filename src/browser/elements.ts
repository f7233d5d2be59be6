// Resolving a snapshot ref to an element, and the facts the guard needs about where that element lives:
// its frame, each ancestor frame, and the top document, as the browser reports them now.

import type { Frame, Locator, Page } from 'playwright-core';
import { swallow } from '../core/debug.ts';
import type { ElementHooks } from '../core/durableSelectors.ts';
import { TabwardError } from '../core/errors.ts';
import { passwordNotShown } from '../core/formBodies.ts';
import type { Effect, FrameFact } from '../core/guard.ts';
import { Redactor } from '../core/redact.ts';
import { translateBrowserError, withDeadline } from './deadline.ts';
import { hooksOf } from './elementHooks.ts';
import { loadedUrlOf } from './loadedUrls.ts';
import type { RefInfo, TrackedPage } from './pages.ts';
import { passwordSeal } from './passwordSeals.ts';
import { readsWorld } from './snapshot/documentReads.ts';
import type { ElementAddress } from './snapshot/frameScopes.ts';
import { callOnElement, locatorFor } from './snapshot/refLocators.ts';
import { passwordsSeen } from './snapshot/snapshot.ts';

export interface ResolvedElement {
  readonly locator: Locator;
  readonly frames: FrameFact[];
  readonly info: RefInfo;
  /** Where clicking it (or pressing a key in it) would send the browser. */
  readonly effects: Effect[];
  /** Its accessible name as the page shows it now (the snapshot's may be stale). */
  readonly liveName: string;
  /** Live name, tag and effects in one string: what an approval is bound to. */
  readonly fingerprint: string;
  /** Its tag name (e.g. SELECT), as the page shows it now. */
  readonly tag: string;
  /** Resolved with a key press in mind (a field's form counts as its effect). */
  readonly keyPress: boolean;
  /**
   * 'password' or 'one-time-code' for a field a value typed into is a secret by what the page says of it (its type,
   * or the autocomplete token a password manager fills), else ''.
   */
  readonly secretKind: string;
  /** What a selector that survives a reload can be made of (test id, id, field name; not in the fingerprint). */
  readonly hooks: ElementHooks;
}

interface LiveFacts {
  readonly effects: Effect[];
  readonly name: string;
  readonly tag: string;
  readonly secretKind: string;
  /** The origin of the element's document as the browser holds it ("null": opaque); undefined when unread. */
  readonly origin?: string;
}

/** The few DOM properties effectsOf reads; the Node tsconfig has no DOM types (docs/architecture.md "Source text run in pages"). */
interface DomElement {
  readonly tagName: string;
  /** An input's type as the browser takes it (lower case, any spelling of the attribute). */
  readonly type?: string;
  readonly innerText?: string;
  readonly value?: unknown;
  readonly ownerDocument: { getElementById(id: string): { readonly innerText?: string } | null };
  readonly href?: string;
  readonly formAction?: string;
  readonly form?: { readonly action: string } | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selector: string): DomElement | null;
}

/**
 * Runs in tabward's isolated world of the element's document (sent there as source text by liveFactsSource and
 * factsOnElement, hence self-contained): its name, tag, a link's target, a submit button's form action and, with
 * keyPress, the form of a field, which Enter submits; recipes' describeLocator still runs it through Playwright.
 */
function liveFactsOf(node: unknown, keyPress: boolean): LiveFacts {
  const el = node as DomElement;
  const out: Effect[] = [];
  const labelledBy = (el.getAttribute('aria-labelledby') ?? '')
    .split(/\s+/)
    .map((id) => (id ? (el.ownerDocument.getElementById(id)?.innerText ?? '') : ''))
    .join(' ');
  const value = el.tagName === 'INPUT' && typeof el.value === 'string' ? el.value : '';
  const name = [
    el.getAttribute('aria-label'),
    labelledBy,
    el.innerText,
    ['button', 'submit', 'reset'].includes((el.getAttribute('type') ?? '').toLowerCase()) ? value : '',
    el.getAttribute('alt'),
    el.getAttribute('title'),
  ]
    .map((part) => (part ?? '').replace(/\s+/g, ' ').trim())
    .find((part) => part.length > 0);
  const link = el.closest('a[href]');
  if (link?.href) out.push({ url: link.href, submitsForm: false });
  const form = el.form ?? (el.closest('form') as { action: string } | null);
  const type = (el.getAttribute('type') ?? '').toLowerCase();
  const isSubmit =
    (el.tagName === 'BUTTON' && (type || 'submit') === 'submit') ||
    (el.tagName === 'INPUT' && (type === 'submit' || type === 'image'));
  const isField = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
  if (form && (isSubmit || (keyPress && isField))) {
    // form.action is clobbered by a field named "action" (<button name="action">): read the form's own getter,
    // and if even that was replaced, resolve the attribute against the document.
    const formElement = globalThis as unknown as {
      HTMLFormElement?: { prototype: object };
      document?: { baseURI: string };
    };
    const getter = formElement.HTMLFormElement
      ? Object.getOwnPropertyDescriptor(formElement.HTMLFormElement.prototype, 'action')?.get
      : undefined;
    const own = getter ? getter.call(form) : undefined;
    const formUrl =
      typeof own === 'string'
        ? own
        : new URL(
            (form as unknown as DomElement).getAttribute('action') ?? '',
            formElement.document?.baseURI ?? undefined,
          ).href;
    const action = isSubmit && el.hasAttribute('formaction') && el.formAction ? el.formAction : formUrl;
    // What the form would send, read as the browser builds it (FormData with its submitter): each field's name and
    // value (a file as its name and size) and, where it posts them URL-encoded, the body itself, which the
    // approval's pass then lets through and no other (core/actionPasses.ts). Method and encoding are read through
    // the prototypes' own getters: a field named "method" clobbers the form's property. No named function here:
    // this source text is run as it is, and a compiler may wrap named ones in a helper the page does not have.
    let formData: {
      fields?: [string, string][];
      sendsAs?: 'urlencoded' | 'multipart' | 'plain';
      unshown?: [number, string][];
      holdsPassword?: string[];
      charset?: string;
    } = {};
    const scope = globalThis as unknown as {
      FormData?: new (form: unknown, submitter?: unknown) => Iterable<[string, unknown]>;
      URLSearchParams?: new (pairs: [string, string][]) => { toString(): string };
      HTMLFormElement?: { prototype: object };
      HTMLButtonElement?: { prototype: object };
      HTMLInputElement?: { prototype: object };
    };
    let entries: [string, unknown][] | undefined;
    try {
      entries = scope.FormData ? [...new scope.FormData(form, isSubmit ? el : undefined)] : undefined;
    } catch {
      entries = undefined;
    }
    if (entries && scope.URLSearchParams && scope.HTMLFormElement) {
      const formProto = scope.HTMLFormElement.prototype;
      // A password's value is never shown nor kept (the approval's binding travels with its question): a field a
      // password goes into (by its type, or the autocomplete token a password manager fills, as secretKind below)
      // shows as a password, and so does any other field holding one of their values (a page's hidden copy of what
      // was typed or autofilled): the question is read by whoever can run `tabward approvals`, the agent's shell
      // included, and the snapshot never showed that value. A form with such a copy opens no write (its post is
      // held and asked as it goes): a value not shown cannot bind what the post may carry there.
      const controls = [
        ...((Object.getOwnPropertyDescriptor(formProto, 'elements')?.get?.call(form) ?? []) as Iterable<{
          type?: string;
          name?: string;
          value?: unknown;
          getAttribute?(name: string): string | null;
        }>),
      ];
      // Copied from any password field of the document, the form's or not.
      const documentInputs = [
        ...((
          el.ownerDocument as unknown as { querySelectorAll?(selector: string): Iterable<unknown> }
        ).querySelectorAll?.('input') ?? []),
      ] as typeof controls;
      // No named function (see above): each control's secrecy is worked out once, in place.
      const judged = [...controls, ...documentInputs].map((control) => {
        const tokens = String(control.getAttribute?.('autocomplete') ?? '')
          .toLowerCase()
          .split(/\s+/);
        // An autocomplete token counts on a field one types text into only (a file input marked as a password
        // showed its file as one, unbound: an attack review).
        const typesText = ['text', 'email', 'tel', 'number', 'search', 'url', ''].includes(
          control.type ?? '',
        );
        const isSecret =
          control.type === 'password' ||
          (typesText &&
            (tokens.includes('current-password') ||
              tokens.includes('new-password') ||
              tokens.includes('one-time-code')));
        return { control, isSecret };
      });
      const secret = new Set(
        judged
          .slice(0, controls.length)
          .filter((entry) => entry.isSecret)
          .map((entry) => entry.control.name),
      );
      const secretValues = judged
        .filter((entry) => entry.isSecret)
        .map((entry) => (typeof entry.control.value === 'string' ? entry.control.value.toLowerCase() : ''))
        // Shorter values are in too many texts to say a field holds one (a password "test", a user "tester").
        .filter((value) => value.length >= 6);
      // What is not shown leaves this world only to be sealed at once (sealedFacts) and bound by its seal. A field
      // of another kind whose value is a password's (in any letter case; one that only contains it, an e-mail
      // address holding a short password, is shown as it is) is named, never shown: the question cannot
      // show it, and must not hide it either (a page's password field holding the text of the form's other fields
      // hid them all from the human), so tabward asks nothing about such a form (core/approvalRounds.ts).
      const unshown: [number, string][] = [];
      const holdsPassword: string[] = [];
      const fields = entries.map(([field, entry], index): [string, string] => {
        const value = typeof entry === 'string' ? entry : undefined;
        if (value !== undefined && secret.has(field)) {
          unshown.push([index, value]);
          return [field, '(a password, not shown)']; // core/formBodies.ts passwordNotShown
        }
        if (value !== undefined && secretValues.includes(value.trim().toLowerCase())) {
          holdsPassword.push(field);
          return [field, '(holds a password, not shown)'];
        }
        if (value !== undefined) return [field, value];
        return [
          field,
          `(a file: ${(entry as { name?: string }).name ?? ''}, ${(entry as { size?: number }).size ?? 0} bytes)`,
        ];
      });
      const submitterProto = (el.tagName === 'BUTTON' ? scope.HTMLButtonElement : scope.HTMLInputElement)
        ?.prototype;
      const [method, enctype] = [
        ['formmethod', 'formMethod', 'method'],
        ['formenctype', 'formEnctype', 'enctype'],
      ].map(([attribute, submitterProperty, formProperty]) =>
        String(
          isSubmit && el.hasAttribute(attribute ?? '') && submitterProto
            ? Object.getOwnPropertyDescriptor(submitterProto, submitterProperty ?? '')?.get?.call(el)
            : Object.getOwnPropertyDescriptor(formProto, formProperty ?? '')?.get?.call(form),
        ).toLowerCase(),
      );
      const sendsAs =
        enctype === 'multipart/form-data' ? 'multipart' : enctype === 'text/plain' ? 'plain' : 'urlencoded';
      // The charset the browser encodes the form in: its accept-charset's first, else the document's (a page in
      // windows-1252 posts a password's "ä" as %E4).
      const accepted = String((form as unknown as DomElement).getAttribute('accept-charset') ?? '')
        .trim()
        .split(/[\s,]+/)[0];
      const charset = (
        accepted || String((el.ownerDocument as unknown as { characterSet?: string }).characterSet ?? 'utf-8')
      ).toLowerCase();
      // Every post is bound to what it shows: a password's value (not shown) may be any, its name and place not.
      formData = {
        fields,
        ...(method === 'post' ? { sendsAs } : {}),
        ...(unshown.length > 0 ? { unshown } : {}),
        ...(holdsPassword.length > 0 ? { holdsPassword } : {}),
        ...(charset !== 'utf-8' ? { charset } : {}),
      };
    }
    out.push({ url: action, submitsForm: true, ...formData });
  }
  const autocomplete = (el.getAttribute('autocomplete') ?? '').toLowerCase().split(/\s+/);
  const secretKind =
    el.tagName !== 'INPUT'
      ? ''
      : el.type === 'password' ||
          autocomplete.includes('current-password') ||
          autocomplete.includes('new-password')
        ? 'password'
        : autocomplete.includes('one-time-code')
          ? 'one-time-code'
          : '';
  // The document's own origin: an about:blank frame has the origin of whoever navigated it there, which need not be
  // its parent's (an ancestor of another site may send a grandchild frame to about:blank and write a form into it).
  const view = (el.ownerDocument as { readonly defaultView?: { readonly origin?: unknown } | null })
    .defaultView;
  const origin = typeof view?.origin === 'string' ? view.origin : undefined;
  return {
    effects: out,
    name: (name ?? '').slice(0, 300),
    tag: el.tagName,
    secretKind,
    ...(origin !== undefined ? { origin } : {}),
  };
}

/** The element's locator and its frame as Playwright knows it (the main frame's needs no lookup). */
async function locatorAndFrame(
  tracked: TrackedPage,
  target: ElementAddress,
  ref: string,
  timeoutMs: number,
): Promise<[Locator, Frame]> {
  const locator = await locatorFor(tracked.page, target, ref);
  if (target.frame.owners.length === 0) return [locator, tracked.page.mainFrame()];
  const handle = await locator.elementHandle({ timeout: timeoutMs });
  const frame = await handle.ownerFrame();
  // Releasing the handle is nobody's wait.
  void handle.dispose().catch(swallow('browser', 'elements.locatorAndFrame: handle.dispose()'));
  if (!frame)
    throw new TabwardError('stale_ref', `Ref ${ref} is no longer in the page.`, 'Take a new snapshot.');
  return [locator, frame];
}

/** liveFactsOf on the element (`this`) with its key-press argument, run by CDP in tabward's isolated world. */
export const liveFactsSource = `function (keyPress) { return (${liveFactsOf.toString()})(this, keyPress); }`;

/** liveFactsOf and hooksOf on the element (`this`), run by CDP in tabward's isolated world. */
const factsOnElement = `function (keyPress) { return [(${liveFactsOf.toString()})(this, keyPress), (${hooksOf.toString()})(this)]; }`;

export async function resolveRef(
  tracked: TrackedPage,
  ref: string,
  timeoutMs: number,
  keyPress = false,
  /** What the agent knows of a value (PasswordCopies.known). */
  known?: KnownToAgent,
): Promise<ResolvedElement> {
  tracked.assertUsable();
  if (tracked.refsDocumentSeq !== tracked.documentSeq) {
    throw new TabwardError(
      'stale_ref',
      `Ref ${ref} is stale: tab ${tracked.id} has navigated since the last snapshot.`,
      'Take a new snapshot.',
    );
  }
  const info = tracked.handedOut.has(ref) ? tracked.refs.get(ref) : undefined;
  if (!info) {
    throw new TabwardError(
      'stale_ref',
      `No element with ref ${ref} in tab ${tracked.id}'s last snapshot.`,
      'Take a new snapshot.',
    );
  }
  const work = async () => {
    // Side by side. The facts are read in tabward's own world of the element's document: a page that patched its
    // built-ins (closest, getAttribute, the form's action, Map) would lie to a read made in its own world about
    // where a click goes.
    const [[locator, frame], [live, hooks]] = await Promise.all([
      locatorAndFrame(tracked, info.target, ref, timeoutMs),
      callOnElement<[LiveFacts, ElementHooks]>(info.target, readsWorld, factsOnElement, [keyPress], ref),
    ]);
    return {
      locator,
      frames: withDocumentOrigin(frameChain(frame), live.origin),
      live: keptFacts(live, { seen: passwordsSeen(tracked), ...(known ? { known } : {}) }),
      hooks,
    };
  };
  // A reload or navigation while the ref is looked up makes it stale at once: answer so, not after the timeout.
  const navigated = tracked.nextDocument(
    () =>
      new TabwardError(
        'stale_ref',
        `Ref ${ref} is stale: tab ${tracked.id} navigated while it was being looked up.`,
        'Take a new snapshot.',
      ),
  );
  try {
    const interrupt = Promise.race([tracked.interrupted, navigated.promise]);
    const { locator, frames, live, hooks } = await withDeadline(
      work(),
      timeoutMs,
      `finding ${ref}`,
      interrupt,
    );
    const element = {
      locator,
      frames,
      info,
      effects: live.effects,
      liveName: live.name || info.name,
      fingerprint: fingerprintOf(frames, live),
      tag: live.tag,
      keyPress,
      secretKind: live.secretKind,
      hooks,
    };
    lookupsOf(tracked).set(ref, { element, documentSeq: tracked.documentSeq });
    return element;
  } catch (error) {
    if (error instanceof TabwardError) throw error;
    throw new TabwardError(
      'stale_ref',
      `Ref ${ref} no longer resolves (${translateBrowserError(error, 'lookup').message}).`,
      'Take a new snapshot.',
    );
  } finally {
    navigated.stop();
  }
}

/**
 * The last lookup of each ref in a tab, while the tab neither navigated nor had an action run in it: the act that
 * follows a call's look uses it instead of looking the element up again (about four round trips each time).
 */
const lookups = new WeakMap<TrackedPage, Map<string, { element: ResolvedElement; documentSeq: number }>>();

function lookupsOf(tracked: TrackedPage): Map<string, { element: ResolvedElement; documentSeq: number }> {
  let map = lookups.get(tracked);
  if (!map) {
    map = new Map();
    lookups.set(tracked, map);
  }
  return map;
}

/**
 * The element as the call's look found it, taken once: only if it is the very lookup that was judged (same
 * fingerprint), in the same document, and nothing acted in the tab since (see forgetLookups).
 */
export function takeLookup(
  tracked: TrackedPage,
  ref: string,
  fingerprint: string | undefined,
  keyPress: boolean,
): ResolvedElement | undefined {
  const map = lookups.get(tracked);
  const found = map?.get(ref);
  map?.delete(ref);
  if (!found || tracked.closed || found.documentSeq !== tracked.documentSeq) return undefined;
  const { element } = found;
  return element.fingerprint === fingerprint && element.keyPress === keyPress ? element : undefined;
}

/** An action is about to run in the tab: what was looked up before it must be looked up again after it. */
export function forgetLookups(tracked: TrackedPage): void {
  lookups.delete(tracked);
}

/** The frame, then its ancestors up to the top document. about:blank/srcdoc frames inherit their parent's origin. */
export function frameChain(frame: Frame): FrameFact[] {
  const chain: FrameFact[] = [];
  let current: Frame | null = frame;
  while (current) {
    const url = current.url();
    const parent: Frame | null = current.parentFrame();
    const inherits = url.startsWith('about:') && parent !== null;
    const loadedUrl = loadedUrlOf(current);
    chain.push({
      url,
      ...(inherits && parent ? { creatorUrl: parent.url() } : {}),
      ...(loadedUrl ? { loadedUrl } : {}),
    });
    current = parent;
  }
  return chain;
}

/**
 * The element's frame as its document really is: an about: frame is taken to share its parent's origin
 * (frameChain), but one an ancestor of another origin navigated has that ancestor's origin, or an opaque one. Then
 * it is judged as that origin's document (its creator), not as the parent's: a secret is not typed into it as into
 * the parent's site. Unchanged where the parent's origin is the document's (its path still counts for the rules).
 */
function withDocumentOrigin(chain: FrameFact[], origin: string | undefined): FrameFact[] {
  const [first, ...rest] = chain;
  if (!first?.url.startsWith('about:') || origin === undefined) return chain;
  if (first.creatorUrl !== undefined && originOfUrl(first.creatorUrl) === origin) return chain;
  const { creatorUrl: _parent, ...own } = first;
  return [origin === 'null' ? own : { ...own, creatorUrl: `${origin}/` }, ...rest];
}

function originOfUrl(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** What the agent already knows of a value: a literal it typed (this client), a declared secret's, or neither. */
export type KnownToAgent = (value: string) => 'typed' | 'declared' | undefined;

/** Passwords a copy of which in a form's other field makes the form unaskable (see keptFacts). */
export interface PasswordCopies {
  /** Passwords the tab's snapshots read anywhere (another frame, a shadow root). */
  readonly seen: readonly string[];
  readonly known?: KnownToAgent;
}

/**
 * The facts as tabward keeps them. Each value a form's question does not show (a password's) is replaced by its
 * seal (core/formBodies.ts), by which the approval's pass binds what the post may carry there, unless the agent
 * typed it: a question shows what the agent typed (core/questionRedaction.ts), or a page making a recipient's field
 * a password field hid the recipient. Each field holding a password of the page is named in `holdsPassword`, its
 * value not shown (copiesNamed). Run on every read of liveFactsOf as it arrives, so that no such value is kept,
 * shown or logged.
 */
export function keptFacts<T extends { readonly effects: Effect[] }>(
  live: T,
  copies: PasswordCopies = { seen: [] },
): T {
  const known = copies.known ?? (() => undefined);
  const own = live.effects.flatMap(
    (effect) =>
      (effect as Effect & { unshown?: [number, string][] }).unshown?.map(([, value]) => value) ?? [],
  );
  return copiesNamed(sealedFacts(typedShown(live, known)), [...own, ...copies.seen], known);
}

/** The password fields' values the agent typed, shown as they are (keptFacts). */
function typedShown<T extends { readonly effects: Effect[] }>(live: T, known: KnownToAgent): T {
  const effects = live.effects.map((effect) => {
    const { unshown } = effect as Effect & { unshown?: [number, string][] };
    const typed = unshown?.filter(([, value]) => known(value) === 'typed') ?? [];
    if (typed.length === 0) return effect;
    const fields = (effect.fields ?? []).map(([name, shown], index): [string, string] => [
      name,
      typed.find(([at]) => at === index)?.[1] ?? shown,
    ]);
    const rest = unshown?.filter(([, value]) => known(value) !== 'typed') ?? [];
    return { ...effect, fields, unshown: rest };
  });
  return { ...live, effects };
}

function sealedFacts<T extends { readonly effects: Effect[] }>(live: T): T {
  if (!live.effects.some((effect) => 'unshown' in effect)) return live;
  const effects = live.effects.map((effect) => {
    const { unshown, ...rest } = effect as Effect & { unshown?: [number, string][] };
    if (!unshown) return effect;
    const sealed: (string | undefined)[] = (rest.fields ?? []).map(() => undefined);
    for (const [index, value] of unshown) if (index < sealed.length) sealed[index] = passwordSeal(value);
    return unshown.length > 0 ? { ...rest, sealed } : rest;
  });
  return { ...live, effects };
}

/**
 * A form field holding a password of the page is named in `holdsPassword`, its value not shown. A password the
 * agent was never given (autofilled, the user's, or one the page set): inside the field's value in any form the
 * redactor knows (as it is, in any letter case, reversed, spaced out, base64, hex, percent-encoded), for the question
 * goes to whoever runs `tabward approvals`, the agent's shell included, and a copy shown there handed the user's
 * password to the agent (an attack review). A declared secret's value: as the field's whole value (the question
 * masks it elsewhere). A literal the agent typed: never (the question shows it). Passwords shorter than six
 * characters are in too many texts to say a field holds one.
 */
function copiesNamed<T extends { readonly effects: Effect[] }>(
  live: T,
  passwords: readonly string[],
  known: KnownToAgent,
): T {
  const long = [...new Set(passwords.filter((value) => value.length >= 6 && known(value) !== 'typed'))];
  if (long.length === 0) return live;
  const needles = long.map((password) => password.toLowerCase());
  const neverGiven = long.filter((password) => known(password) === undefined);
  const spelled = neverGiven.length > 0 ? new Redactor(neverGiven) : undefined;
  const holdsOne = (value: string) =>
    needles.includes(value.trim().toLowerCase()) || (spelled !== undefined && spelled.text(value) !== value);
  const effects = live.effects.map((effect) => {
    const holds = new Set(effect.holdsPassword);
    const fields = effect.fields?.map(([name, value], index): [string, string] => {
      const shownAsPassword = value === passwordNotShown && effect.sealed?.[index] !== undefined;
      if (shownAsPassword || holds.has(name) || !holdsOne(value)) return [name, value];
      holds.add(name);
      return [name, '(holds a password, not shown)'];
    });
    return holds.size === 0 ? effect : { ...effect, fields, holdsPassword: [...holds] };
  });
  return { ...live, effects };
}

function fingerprintOf(frames: readonly FrameFact[], live: LiveFacts): string {
  return JSON.stringify({ frame: frames[0]?.url ?? '', ...live });
}

/** Every frame of the page with its ancestors: when the frame an action reaches cannot be known, all count. */
export function allFrames(page: Page): FrameFact[] {
  return page.frames().flatMap((frame) => frameChain(frame));
}

export interface FocusTarget {
  readonly frames: FrameFact[];
  readonly effects: Effect[];
  /** The element's accessible name and tag, as the page shows them now. */
  readonly name: string;
  readonly tag: string;
  /** 'password' or 'one-time-code' for a secret field (LiveFacts.secretKind); absent when none was read. */
  readonly secretKind?: string;
}

/** The live facts of the first element a locator matches: its frame chain, name, tag, effects, fingerprint. */
export async function describeLocator(
  locator: Locator,
  keyPress: boolean,
  timeoutMs: number,
): Promise<FocusTarget & { fingerprint: string }> {
  const work = async () => {
    // elementHandle waits for the element to be attached; the frame and the facts are read side by side.
    const handle = await locator.elementHandle({ timeout: timeoutMs });
    const [frame, live] = await Promise.all([handle.ownerFrame(), handle.evaluate(liveFactsOf, keyPress)]);
    void handle.dispose().catch(swallow('browser', 'elements.describeLocator: handle.dispose()'));
    const frames = frame ? frameChain(frame) : [];
    const sealed = keptFacts(live);
    return { frames, ...sealed, fingerprint: fingerprintOf(frames, sealed) };
  };
  return withDeadline(work(), timeoutMs, 'finding the element');
}
