// The benchmark's pages: what agents read day to day. Each page declares the visible text and the interactive
// elements it contains, so coverage can be checked against every server's snapshot.

export interface BenchPage {
  readonly name: string;
  readonly html: string;
  /** Visible text fragments a snapshot must let the agent read. */
  readonly texts: readonly string[];
  /** Accessible names of the interactive elements a snapshot must let the agent address. */
  readonly controls: readonly string[];
}

const words = [
  'system',
  'browser',
  'agent',
  'login',
  'review',
  'policy',
  'token',
  'report',
  'quarter',
  'market',
  'river',
  'signal',
  'cache',
  'window',
  'garden',
  'ledger',
];
/** Deterministic prose: the same words in the same order on every run. */
function prose(seed: number, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++)
    out.push(words[(seed * 7 + i * 3 + ((i * i) % 5)) % words.length] ?? 'word');
  return `${out.join(' ')}.`;
}
const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

function login(): BenchPage {
  return {
    name: 'login form',
    html: page(
      'Sign in',
      `<main><h1>Sign in to Acme</h1><form><label>Email <input type="email" name="email"></label>
      <label>Password <input type="password" name="pw"></label><label><input type="checkbox" name="keep"> Keep me signed in</label>
      <button>Sign in</button></form><a href="/forgot">Forgot password?</a><a href="/signup">Create an account</a></main>`,
    ),
    texts: ['Sign in to Acme'],
    controls: ['Email', 'Password', 'Keep me signed in', 'Sign in', 'Forgot password?', 'Create an account'],
  };
}

function dashboard(): BenchPage {
  const rows = Array.from({ length: 50 }, (_, i) => ({
    id: `INV-${2000 + i}`,
    client: `Client ${String.fromCharCode(65 + (i % 26))}${i}`,
    amount: (i * 37.5 + 12).toFixed(2),
    state: ['paid', 'open', 'late'][i % 3] ?? 'open',
  }));
  const table = rows
    .map(
      (r) =>
        `<tr><td>${r.id}</td><td>${r.client}</td><td>${r.amount}</td><td>${r.state}</td><td><a href="/invoice/${r.id}">View ${r.id}</a></td></tr>`,
    )
    .join('');
  return {
    name: 'dashboard, 50-row table',
    html: page(
      'Invoices',
      `<nav><a href="/">Home</a> <a href="/invoices">Invoices</a> <a href="/reports">Reports</a></nav><h1>Invoices</h1>
      <button>New invoice</button><button>Export</button><table><thead><tr><th>Invoice</th><th>Client</th><th>Amount</th><th>State</th><th></th></tr></thead><tbody>${table}</tbody></table>`,
    ),
    texts: ['Invoices', ...rows.flatMap((r) => [r.id, r.client, r.amount])],
    controls: ['Home', 'Reports', 'New invoice', 'Export', ...rows.map((r) => `View ${r.id}`)],
  };
}

function navigation(): BenchPage {
  const items = [
    'Overview',
    'Projects',
    'Issues',
    'Pull requests',
    'Actions',
    'Wiki',
    'Security',
    'Insights',
  ];
  return {
    name: 'navigation and buttons',
    html: page(
      'Project',
      `<header><nav>${items.map((item) => `<a href="/${item.toLowerCase().replace(' ', '-')}">${item}</a>`).join(' ')}</nav></header>
      <main><h1>acme/app</h1><p>${prose(1, 20)}</p><div><button>Star</button><button>Fork</button><button>Watch</button><button aria-label="More actions">…</button></div></main>`,
    ),
    texts: ['acme/app', prose(1, 20)],
    controls: [...items, 'Star', 'Fork', 'Watch', 'More actions'],
  };
}

function article(): BenchPage {
  const sections = Array.from({ length: 12 }, (_, i) => ({
    heading: `Section ${i + 1}: ${words[i] ?? 'topic'} notes`,
    paragraphs: [prose(i * 3, 80), prose(i * 3 + 1, 80), prose(i * 3 + 2, 80)],
  }));
  const body = sections
    .map(
      (s, i) =>
        `<h2>${s.heading}</h2>${s.paragraphs.map((p) => `<p>${p}</p>`).join('')}<p><a href="/ref/${i}">Reference ${i + 1}</a></p><img src="data:," alt="Figure ${i + 1}">`,
    )
    .join('');
  return {
    name: 'long article (~3,000 words)',
    html: page('A long article', `<article><h1>A long article</h1>${body}</article>`),
    texts: ['A long article', ...sections.flatMap((s) => [s.heading, ...s.paragraphs])],
    controls: sections.map((_, i) => `Reference ${i + 1}`),
  };
}

function search(): BenchPage {
  const results = Array.from({ length: 10 }, (_, i) => ({
    title: `Result ${i + 1}: ${words[i] ?? 'x'} guide`,
    snippet: prose(i + 40, 25),
  }));
  return {
    name: 'search results',
    html: page(
      'Search',
      `<form role="search"><input type="search" aria-label="Search" value="browser agents"><button>Search</button></form>
      <ol>${results.map((r, i) => `<li><a href="/r/${i}">${r.title}</a><p>${r.snippet}</p></li>`).join('')}</ol><a href="/page/2">Next</a>`,
    ),
    texts: results.flatMap((r) => [r.snippet]),
    controls: ['Search', ...results.map((r) => r.title), 'Next'],
  };
}

function settings(): BenchPage {
  return {
    name: 'settings form',
    html: page(
      'Settings',
      `<h1>Settings</h1><form><fieldset><legend>Profile</legend><label>Display name <input value="Alice"></label>
      <label>Bio <textarea>Hello</textarea></label><label>Timezone <select><option>UTC</option><option>Europe/Berlin</option></select></label></fieldset>
      <fieldset><legend>Notifications</legend><label><input type="checkbox" checked> Email me</label><label><input type="radio" name="f" checked> Daily</label><label><input type="radio" name="f"> Weekly</label></fieldset>
      <button>Save changes</button><button type="button">Delete account</button></form>`,
    ),
    texts: ['Settings'],
    controls: [
      'Display name',
      'Bio',
      'Timezone',
      'Email me',
      'Daily',
      'Weekly',
      'Save changes',
      'Delete account',
    ],
  };
}

function product(): BenchPage {
  return {
    name: 'product page',
    html: page(
      'Trail shoe',
      `<nav><a href="/">Shop</a> › <a href="/shoes">Shoes</a></nav><h1>Trail shoe X2</h1><p class="price">€129.00</p>
      <p>${prose(9, 60)}</p><label>Size <select><option>40</option><option>41</option><option>42</option></select></label>
      <button>Add to cart</button><button>Add to wishlist</button><h2>Reviews</h2><ul><li>${prose(11, 20)}</li><li>${prose(12, 20)}</li></ul>`,
    ),
    texts: ['Trail shoe X2', '€129.00', prose(9, 60), prose(11, 20), prose(12, 20)],
    controls: ['Shop', 'Shoes', 'Size', 'Add to cart', 'Add to wishlist'],
  };
}

export const benchPages: readonly BenchPage[] = [
  login(),
  dashboard(),
  navigation(),
  article(),
  search(),
  settings(),
  product(),
];
