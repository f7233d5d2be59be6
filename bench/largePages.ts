// Large, realistic bench pages (issue 37), generated deterministically at a scale (1×, 4×, 16×): a long orders
// table, a long article with many links, a product page with many widgets, a page with several cross-site frames,
// and a news front page that loads stylesheets, scripts and images as real sites do (cacheable and shared by the
// site's pages: /asset/, served by the bench with max-age). Real layouts are not bare markup: every item sits in
// wrapper divs, carries icons (aria-hidden SVG), and the page holds menus that are not shown; that is what makes a
// real page's accessibility tree large.
// Each page declares every visible text fragment (for coverage and the floor) and every control's name.

import type { BenchPage } from './pages.ts';

/** A page whose frames come from other sites: `frames` are served at /frame/<name> from those hosts. */
export interface LargePage extends BenchPage {
  readonly kind: string;
  readonly scale: number;
  /** Frame documents by name, each to be served from a host of its own (a cross-site frame). */
  readonly frames: Readonly<Record<string, string>>;
}

const vocabulary = (
  'account billing browser cache client export garden harbour invoice ledger market ' +
  'network order policy quarter report review river shipping signal storage summary token window'
).split(' ');
/** Deterministic prose: the same words in the same order on every run. */
function prose(seed: number, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++)
    out.push(vocabulary[(seed * 11 + i * 7 + ((i * i) % 13)) % vocabulary.length] ?? 'word');
  return `${out.join(' ')}.`;
}
const icon =
  '<svg aria-hidden="true" width="16" height="16" viewBox="0 0 16 16"><path d="M2 2h12v12H2z"/></svg>';
/** Wrapper divs, as component libraries nest them. */
const wrap = (depth: number, inner: string) =>
  `${'<div class="c">'.repeat(depth)}${inner}${'</div>'.repeat(depth)}`;
/** A menu that is in the DOM but not shown: no text of it is visible. */
const hiddenMenu = (id: string, items: number) =>
  `<ul class="menu" hidden>${Array.from({ length: items }, (_, i) => `<li><a href="/${id}/${i}">${id} option ${i}</a></li>`).join('')}</ul>`;
const style = `<style>.c{padding:1px}.badge{border-radius:4px}.chip{cursor:pointer;display:inline-block}
.grid{display:grid;grid-template-columns:repeat(4,1fr)}</style>`;
const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${style}</head><body>${body}</body></html>`;

function chrome(texts: string[], controls: string[], site: string): string {
  const top = ['Home', 'Products', 'Pricing', 'Docs', 'Blog', 'Support'];
  const foot = ['About us', 'Careers', 'Press', 'Privacy', 'Terms', 'Status', 'Contact'];
  controls.push(...top, ...foot, 'Account menu');
  texts.push(...top, ...foot);
  return `<header>${wrap(2, `<a href="/">${icon}<span>${site}</span></a>`)}<nav>${top
    .map((item) => wrap(1, `<a href="/${item.toLowerCase()}">${item}</a>`))
    .join(
      '',
    )}</nav>${wrap(1, `<button aria-label="Account menu">${icon}</button>${hiddenMenu('account', 6)}`)}</header>
    <footer>${foot.map((item) => wrap(1, `<a href="/${item.toLowerCase().replace(' ', '-')}">${item}</a>`)).join('')}</footer>`;
}

function ordersTable(scale: number): LargePage {
  const texts: string[] = ['Orders'];
  const controls: string[] = ['Search orders', 'Status', 'Export CSV', 'Bulk archive', 'Next page'];
  const rows = Array.from({ length: 50 * scale }, (_, i) => {
    const id = `ORD-${10000 + i}`;
    const client = `Client ${String.fromCharCode(65 + (i % 26))}${i}`;
    const email = `buyer${i}@example.com`;
    const amount = (i * 37.5 + 12).toFixed(2);
    const state = ['paid', 'open', 'late', 'refunded'][i % 4] ?? 'open';
    texts.push(id, client, email, amount);
    controls.push(`Select ${id}`, `Edit ${id}`, `More for ${id}`);
    return `<tr>${[
      `<input type="checkbox" aria-label="Select ${id}">`,
      `<a href="/orders/${id}">${id}</a>`,
      wrap(2, `<span>${client}</span><br><span class="sub">${email}</span>`),
      `<span class="amount">${amount}</span>`,
      wrap(1, `<span class="badge">${icon}${state}</span>`),
      wrap(
        1,
        `<button>${icon}<span>Edit ${id}</span></button><button aria-label="More for ${id}">${icon}</button>${hiddenMenu(id, 3)}`,
      ),
    ]
      .map((cell) => `<td>${cell}</td>`)
      .join('')}</tr>`;
  }).join('');
  const body = `${chrome(texts, controls, 'Shopdesk')}<main><h1>Orders</h1>
    ${wrap(2, `<input type="search" aria-label="Search orders" placeholder="Search"><label>Status <select><option>All</option><option>Paid</option><option>Open</option></select></label><button>${icon}Export CSV</button><button>Bulk archive</button>`)}
    <table><thead><tr><th>Select</th><th>Order</th><th>Client</th><th>Amount</th><th>State</th><th>Actions</th></tr></thead><tbody>${rows}</tbody></table>
    <nav aria-label="Pagination"><a href="?page=2">Next page</a></nav></main>`;
  return {
    kind: 'orders table',
    name: `orders table, ${50 * scale} rows (${scale}×)`,
    scale,
    html: page('Orders', body),
    texts,
    controls,
    frames: {},
  };
}

function longArticle(scale: number): LargePage {
  const texts: string[] = [];
  const controls: string[] = [];
  const sectionCount = 12 * scale;
  const toc: string[] = [];
  const sections = Array.from({ length: sectionCount }, (_, s) => {
    const heading = `Section ${s + 1}: ${vocabulary[s % vocabulary.length]} notes`;
    texts.push(heading);
    toc.push(`<li><a href="#s${s}">${heading}</a></li>`);
    const paragraphs = Array.from({ length: 3 }, (_, p) => {
      const seed = s * 3 + p;
      const parts = [prose(seed, 25), prose(seed + 100, 25), prose(seed + 200, 25)];
      const links = [
        `source ${s + 1}.${p + 1}`,
        `see ${vocabulary[seed % vocabulary.length]} ${s + 1}.${p + 1}`,
      ];
      texts.push(...parts);
      controls.push(...links);
      return `<p>${parts[0]} <a href="https://example.org/${seed}">${links[0]}</a> ${parts[1]} <a href="/wiki/${seed}">${links[1]}</a> ${parts[2]}</p>`;
    }).join('');
    const caption = `Figure ${s + 1}: ${prose(s + 300, 6)}`;
    texts.push(caption);
    return `<section id="s${s}"><h2>${heading}</h2>${paragraphs}<figure>${wrap(1, `<img src="data:," alt="Chart ${s + 1}">`)}<figcaption>${caption}</figcaption></figure></section>`;
  }).join('');
  controls.push(...toc.map((_, s) => `Section ${s + 1}: ${vocabulary[s % vocabulary.length]} notes`));
  const comments = Array.from({ length: 5 * scale }, (_, c) => {
    const author = `reader${c}`;
    const said = prose(c + 500, 18);
    texts.push(author, said);
    controls.push(`Reply to ${author}`);
    return `<li>${wrap(2, `<strong>${author}</strong><p>${said}</p><button>Reply to ${author}</button>`)}</li>`;
  }).join('');
  const related = Array.from({ length: 10 }, (_, r) => `Related story ${r + 1}`);
  controls.push(...related);
  texts.push('A long article', 'Comments');
  const body = `${chrome(texts, controls, 'The Daily Ledger')}<main><article><h1>A long article</h1>
    <nav aria-label="Contents"><ol>${toc.join('')}</ol></nav>${sections}</article>
    <aside>${related.map((r, i) => wrap(1, `<a href="/related/${i}">${r}</a>`)).join('')}</aside>
    <section><h2>Comments</h2><ul>${comments}</ul></section></main>`;
  return {
    kind: 'long article',
    name: `long article, ~${(3000 * scale).toLocaleString('en')} words (${scale}×)`,
    scale,
    html: page('A long article', body),
    texts,
    controls,
    frames: {},
  };
}

function productPage(scale: number): LargePage {
  const texts: string[] = ['Trail shoe X2', '€129.00', 'Reviews', 'Questions', 'You may also like'];
  const controls: string[] = ['Size', 'Quantity', 'Add to cart', 'Add to wishlist', 'Size guide'];
  const gallery = Array.from({ length: 8 * scale }, (_, g) => {
    controls.push(`Show image ${g + 1}`);
    return `<button aria-label="Show image ${g + 1}"><img src="data:," alt=""></button>`;
  }).join('');
  const colours = ['Black', 'Slate', 'Sand', 'Forest', 'Ocean', 'Ember'];
  controls.push(...colours, 'Description', 'Specifications', 'Shipping');
  const description = prose(9, 60);
  texts.push(description);
  const reviews = Array.from({ length: 10 * scale }, (_, r) => {
    const title = `Review ${r + 1}: ${vocabulary[(r * 5) % vocabulary.length]} fit`;
    const said = prose(r + 40, 30);
    texts.push(title, said);
    controls.push(`Helpful (${r % 9}) review ${r + 1}`, `Report review ${r + 1}`);
    return `<li>${wrap(
      2,
      `<span role="img" aria-label="${(r % 5) + 1} out of 5 stars">${icon.repeat(5)}</span><h3>${title}</h3><p>${said}</p>
      <button>Helpful (${r % 9}) review ${r + 1}</button><a href="/report/${r}">Report review ${r + 1}</a>`,
    )}</li>`;
  }).join('');
  const faq = Array.from({ length: 5 * scale }, (_, q) => {
    const question = `Question ${q + 1}: does the ${vocabulary[q % vocabulary.length]} work?`;
    controls.push(question);
    return `<details><summary>${question}</summary><p>${prose(q + 700, 20)}</p></details>`;
  }).join('');
  const recommendations = Array.from({ length: 8 * scale }, (_, c) => {
    const name = `Shoe model ${c + 1}`;
    const price = `€${(59 + c).toFixed(2)}`;
    texts.push(price);
    controls.push(name, `Quick add ${name}`);
    return wrap(
      2,
      `<a href="/p/${c}"><img src="data:," alt="">${name}</a><span>${price}</span><button>Quick add ${name}</button>`,
    );
  }).join('');
  const body = `${chrome(texts, controls, 'Trailhead')}<main>
    <nav aria-label="Breadcrumb"><a href="/">Shop</a> › <a href="/shoes">Shoes</a></nav>
    <div class="grid">${gallery}</div><h1>Trail shoe X2</h1>${wrap(2, '<p class="price">€129.00</p>')}
    <div role="radiogroup" aria-label="Colour">${colours.map((c, i) => `<label>${wrap(1, `<input type="radio" name="colour"${i === 0 ? ' checked' : ''}>`)}${c}</label>`).join('')}</div>
    <label>Size <select><option>40</option><option>41</option><option>42</option><option>43</option><option>44</option></select></label>
    <label>Quantity <input type="number" value="1" min="1"></label>
    <div class="chip" onclick="void 0">Size guide</div>
    <button>${icon}Add to cart</button><button>${icon}Add to wishlist</button>
    <div role="tablist"><button role="tab" aria-selected="true">Description</button><button role="tab">Specifications</button><button role="tab">Shipping</button></div>
    <div role="tabpanel"><p>${description}</p></div><div role="tabpanel" hidden><table><tr><td>Weight</td><td>290 g</td></tr></table></div>
    <h2>Reviews</h2><ul>${reviews}</ul><h2>Questions</h2>${faq}<h2>You may also like</h2><div class="grid">${recommendations}</div></main>`;
  return {
    kind: 'product page',
    name: `product page, ${10 * scale} reviews (${scale}×)`,
    scale,
    html: page('Trail shoe', body),
    texts,
    controls,
    frames: {},
  };
}

/** The frames of the embeds page, each from a host of its own (cross-site: each in a process of its own). */
function embeds(scale: number): LargePage {
  const texts: string[] = ['Match report'];
  const controls: string[] = [];
  const story = Array.from({ length: 4 * scale }, (_, p) => prose(p + 900, 40));
  texts.push(...story);
  const frame = (title: string, body: string) => page(title, body);
  const comments = Array.from({ length: 6 * scale }, (_, c) => {
    const said = prose(c + 1200, 16);
    texts.push(said);
    controls.push(`Like comment ${c + 1}`);
    return `<li>${wrap(2, `<p>${said}</p><button>Like comment ${c + 1}</button>`)}</li>`;
  }).join('');
  const stores = Array.from({ length: 6 * scale }, (_, s) => {
    controls.push(`Store ${s + 1} directions`);
    texts.push(`Store ${s + 1}, ${vocabulary[s % vocabulary.length]} street`);
    return `<li>${wrap(1, `Store ${s + 1}, ${vocabulary[s % vocabulary.length]} street <a href="/dir/${s}">Store ${s + 1} directions</a>`)}</li>`;
  }).join('');
  const transcript = Array.from({ length: 3 * scale }, (_, t) => prose(t + 1500, 20));
  texts.push(...transcript, 'Sponsored: trail shoes on sale');
  controls.push('Play', 'Mute', 'Shop the sale');
  return {
    kind: 'cross-site frames',
    name: `page with 4 cross-site frames (${scale}×)`,
    scale,
    html: page(
      'Match report',
      `${chrome(texts, controls, 'Sports Today')}<main><h1>Match report</h1>${story.map((p) => `<p>${p}</p>`).join('')}
      <iframe title="Comments" src="{{comments}}" width="600" height="400"></iframe>
      <iframe title="Stores" src="{{stores}}" width="600" height="300"></iframe>
      <iframe title="Video" src="{{video}}" width="600" height="300"></iframe>
      <iframe title="Advertisement" src="{{ad}}" width="300" height="250"></iframe></main>`,
    ),
    texts,
    controls,
    frames: {
      comments: frame('Comments', `<h2>Comments</h2><ul>${comments}</ul>`),
      stores: frame('Stores', `<h2>Stores near you</h2><ul>${stores}</ul>`),
      video: frame(
        'Video',
        `<div>${wrap(2, `<button>${icon}Play</button><button>${icon}Mute</button>`)}</div>${transcript.map((t) => `<p>${t}</p>`).join('')}`,
      ),
      ad: frame(
        'Ad',
        `<p>Sponsored: trail shoes on sale</p><a href="https://shop.example/sale">Shop the sale</a>`,
      ),
    },
  };
}

/** A script of the site's bundle: ~30 KB, as sites ship them (the same URL on every page: cached after the first). */
export function assetScript(n: number): string {
  const lines = Array.from(
    { length: 600 },
    (_, i) =>
      `function f${n}_${i}(a){return a*${i}+${n}}window.__bundle${n}=(window.__bundle${n}||0)+f${n}_${i}(1);`,
  );
  return lines.join('\n');
}

/** A news front page: 4 stylesheets and 8 scripts in the head (render-blocking), a thumbnail per story. */
function newsFront(scale: number): LargePage {
  const texts: string[] = ['Top stories'];
  const controls: string[] = [];
  const head = [
    ...Array.from({ length: 4 }, (_, i) => `<link rel="stylesheet" href="/asset/site-${i}.css">`),
    ...Array.from({ length: 8 }, (_, i) => `<script src="/asset/app-${i}.js"></script>`),
  ].join('');
  const stories = Array.from({ length: 20 * scale }, (_, s) => {
    const headline = `Story ${s + 1}: the ${vocabulary[s % vocabulary.length]} report`;
    const teaser = prose(s + 2000, 22);
    texts.push(headline, teaser);
    controls.push(headline, `Save story ${s + 1}`);
    return `<li>${wrap(2, `<img src="/asset/thumb-${s}.png" alt="" width="120" height="80"><h3><a href="/story/${s}">${headline}</a></h3><p>${teaser}</p><button>${icon}Save story ${s + 1}</button>`)}</li>`;
  }).join('');
  const body = `${chrome(texts, controls, 'Morning Post')}<main><h1>Top stories</h1><ul>${stories}</ul></main>`;
  return {
    kind: 'news front page',
    name: `news front page, ${20 * scale} stories, ${12 + 20 * scale} assets (${scale}×)`,
    scale,
    html: page('Morning Post', body).replace('</head>', `${head}</head>`),
    texts,
    controls,
    frames: {},
  };
}

export const largeScales = [1, 4, 16] as const;

export function largePages(scales: readonly number[] = largeScales): LargePage[] {
  return scales.flatMap((scale) => [
    ordersTable(scale),
    longArticle(scale),
    productPage(scale),
    embeds(scale),
    newsFront(scale),
  ]);
}
