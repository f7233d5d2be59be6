// What the network backstop holds for a human, rather than stopping outright. While an agent action runs in a
// tab, a request of that tab that the rules would stop (a write on a sensitive page nobody approved, a
// navigation into one), or that could carry what the agent read on a sensitive site to another site, is held
// and put to the human answering for that action. Pure: the backstop (browser/networkGuard.ts) supplies the
// request, the call path (core/callPath.ts) the action and its approver.

/** A request as the backstop sees it when it is paused. */
export interface RequestFacts {
  /** Values its question must never show (the sending page's passwords; browser/requestJudge.ts). */
  readonly unshown?: readonly string[];
  readonly method: string;
  readonly url: string;
  /** A document request: a navigation of the tab or of one of its frames. */
  readonly document: boolean;
  /** A document request of the tab itself (not of a frame in it). */
  readonly mainFrame: boolean;
  /** A redirect hop of an earlier request: it carries on whatever the first one carried. */
  readonly hop: boolean;
  /**
   * The URL of the document that made the request, when known (a data: document, an about:blank popup); for a
   * frame's document request, the document that holds the frame.
   */
  readonly frameUrl?: string;
  /** Its Origin header, when it carries one: the origin of the document that sent it ("null": an opaque one). */
  readonly origin?: string;
  /** The id it shares with its redirect hops (CDP's network id), when the hook that saw it knows it. */
  readonly chain?: string;
  /**
   * The address of the document that sent it, as far as the hook knows (the frame's, else its tab's page): what a
   * question about it shows as its page, since the tab an action runs in is not always the one that sent it (a
   * popup the action's page opened).
   */
  readonly sentFrom?: string;
  /** What it carries, as text (a form's fields, a script's JSON), when the hook that saw it could read it. */
  readonly body?: string;
  /** It carries a body the hook could not read (too long to report, a stream): a question could not show it. */
  readonly bodyUnread?: boolean;
}

/** The human answering for one running action, as the backstop reaches them. */
export interface Attendant {
  /** The tab the action runs in; undefined: a new tab (new_page) whose id is not known yet. */
  readonly scope: string | undefined;
  /** Why this request, which no rule stops, could carry sensitive data off-site; undefined: it may go. */
  taintReason(request: RequestFacts): string | undefined;
  /** The action put data of the agent's into the page (a script, typed text): its document stays suspect. */
  readonly carriesData: boolean;
  /** False once the call path it belongs to is closed (a recipe run over, a client gone): it judges nothing more. */
  live(): boolean;
  /**
   * Hold the request and ask; undefined when the human let it go, else why it was not sent (the human said no, or
   * it could not be asked about). `taint`: held by taintReason, not by a rule.
   */
  ask(request: RequestFacts, reason: string, taint: boolean): Promise<string | undefined>;
}

/** What a running action's requests are weighed against for taint. */
export interface TaintContext {
  /** Origins of sensitive pages the agent has read. */
  readonly tainted: readonly string[];
  /** Hosts (scheme://host) the human allowed this session to send to. */
  readonly allowed: ReadonlySet<string>;
  /** Origins the guard already judged this action on: its frame, its destination, its links and forms. */
  readonly acting: readonly string[];
  /**
   * A navigation carries data only in its URL: the tab's document request and its redirect hops, and whatever a
   * document made of the URL itself (data:, blob:, about:blank) requests. Another action (a script, typed
   * text, a dialog answer) may send from any request.
   */
  readonly navigationOnly: boolean;
}

/**
 * Why a request made during a data-carrying action, after the agent read a sensitive site, must be asked
 * about: it goes to a host that is neither one the action was judged on nor one the human allowed for this
 * session, and it could carry what was read on another host than its own. What was read on a host may go back to
 * that host, and only there: a host read is no safe place for what was read elsewhere (an attacker's host that a
 * broad rule calls sensitive, `bank.evil.example`, fetched once by its page, would otherwise take what the agent
 * read on github.com). Hosts, not registrable domains: a read of mail.google.com must not make every google.com
 * host (forms, scripts anyone can publish) a safe place to send to. An address tabward cannot read is never let go.
 */
export function taintReason(request: RequestFacts, context: TaintContext): string | undefined {
  if (context.tainted.length === 0) return undefined;
  if (context.navigationOnly && !(request.document && request.mainFrame) && !opaqueDocument(request.frameUrl))
    return undefined;
  const host = hostKeyOf(request.url);
  if (host === undefined)
    return webAddress(request.url)
      ? `the agent has read sensitive pages (or typed a secret) on ${hostsOf(context.tainted)}, and this request goes to an address tabward cannot read`
      : undefined;
  if (context.acting.map(hostKeyOf).includes(host) || context.allowed.has(host)) return undefined;
  const elsewhere = context.tainted.filter((origin) => hostKeyOf(origin) !== host);
  if (elsewhere.length === 0) return undefined;
  return `the agent has read sensitive pages (or typed a secret) on ${hostsOf(elsewhere)}, and this request could carry that to ${host}`;
}

function hostsOf(origins: readonly string[]): string {
  return origins.map((origin) => hostOf(origin)).join(', ');
}

/**
 * scheme://host[:port], the unit taint is judged in (ws: and wss: as http: and https:; a port that is not the
 * scheme's own is another server, often another application of the same machine); undefined when unreadable.
 */
export function hostKeyOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const scheme = { 'ws:': 'http:', 'wss:': 'https:' }[parsed.protocol] ?? parsed.protocol;
  if (scheme !== 'http:' && scheme !== 'https:') return undefined;
  const port =
    parsed.port && parsed.port !== { 'http:': '80', 'https:': '443' }[scheme] ? `:${parsed.port}` : '';
  return `${scheme}//${parsed.hostname}${port}`;
}

/** A network address (http, https, ws, wss), whether or not it parses. */
export function webAddress(url: string): boolean {
  return /^\s*(https?|wss?):/i.test(url);
}

/**
 * "POST bank.example/transfer": what the human is shown a request goes to. A request the page sent shows no query
 * (it may be the data, and a page retrying with another query is the same request refused again); an action's
 * own target (`withQuery`: a link, a navigation) shows it whole: a GET can write (`/settings/sessions?revoke=all`),
 * and the human approves what it does (core/approvedPass.ts bounds the line, and covers only what it shows whole).
 */
export function requestDestination(method: string, url: string, withQuery = false): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'data:' || parsed.protocol === 'blob:' || parsed.protocol === 'javascript:')
      return `${method.toUpperCase()} ${parsed.protocol} document`;
    const query = !(parsed.search || parsed.hash)
      ? ''
      : withQuery && parsed.search
        ? `${parsed.search}${parsed.hash ? ' (and a fragment)' : ''}`
        : ' (with data in the URL)';
    return `${method.toUpperCase()} ${parsed.host}${parsed.pathname}${query}${internationalName(parsed.hostname)}`;
  } catch {
    return `${method.toUpperCase()} (an address that does not parse)`;
  }
}

/**
 * An international host name travels as xn--… (a look-alike such as аpple.com with a Cyrillic а becomes
 * xn--pple-43d.com): flagged, so the human does not take it for a name they know.
 */
export function internationalName(hostname: string): string {
  if (!hostname.split('.').some((label) => label.startsWith('xn--'))) return '';
  return ' ⚠ international name (xn--): may imitate another site';
}

function opaqueDocument(frameUrl: string | undefined): boolean {
  if (frameUrl === undefined) return false;
  return /^(data:|blob:|about:|javascript:)/i.test(frameUrl);
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return origin;
  }
}
