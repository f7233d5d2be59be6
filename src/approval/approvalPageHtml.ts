// The approval page's markup and script (one question per page), served from memory: no build step, no external resources. Every
// string comes from /pending already sanitised and is set with textContent, never parsed as markup; the
// element's name sits in its own framed box so the page cannot close its quotes and write past it.

export const approvalPageHtml = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabward approvals</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px system-ui,sans-serif;margin:2rem auto;max-width:46rem;color:#222}
.card{border:1px solid #ccc;border-radius:8px;padding:1rem;margin:1rem 0}
.sensitive{border-color:#c0392b;background:#fff5f4}
.tag{font-size:12px;background:#eee;border-radius:4px;padding:1px 6px;margin-left:6px}
code.name{border:1px dashed #888;border-radius:3px;padding:0 4px;unicode-bidi:isolate}
pre{background:#f6f6f6;padding:.5rem;white-space:pre-wrap;overflow-wrap:anywhere}
button{margin-right:.5rem;padding:.4rem .9rem}
textarea{width:100%;height:6rem;display:none}
</style></head><body>
<h1>tabward approvals</h1><p id="empty">This question has been answered (or is gone). You can close this page.</p><div id="list"></div>
<script>
const base = location.pathname;
const shown = new Set();
function el(tag, attrs, text) { const e = document.createElement(tag); Object.assign(e, attrs || {}); if (text) e.textContent = text; return e; }
const approving = ['approve', 'approve-all', 'site-grant', 'modify'];
async function decide(id, decision, r) {
  const say = (text) => { const m = document.getElementById('msg-' + id); if (m) m.textContent = text; };
  let assertion;
  // A human-verified question: the passkey proves a person is here (user verification), for this question only.
  if (r && r.needsPresence && approving.includes(decision.choice)) {
    try {
      const options = await (await fetch(base + 'challenge')).json();
      const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
      assertion = credential.toJSON();
    } catch (e) { say('Not approved: the passkey did not answer (' + e.name + ').'); return; }
  }
  const res = await fetch(base + 'decide', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, decision, assertion }) });
  if (!res.ok) { say((await res.json().catch(() => ({}))).error || 'Not answered (' + res.status + ').'); return; }
  refresh();
}
function card(r) {
  const c = el('div', { className: 'card' + (r.sensitive ? ' sensitive' : ''), id: 'req-' + r.id });
  const h = el('h3', {}, r.tool + (r.element ? ' on ' + r.element.role + ' ' : ''));
  if (r.element) h.append(el('code', { className: 'name' }, r.element.name));
  if (r.warning) h.append(el('span', { className: 'tag' }, r.warning.toLowerCase()));
  c.append(h);
  if (r.client) c.append(el('p', {}, 'Asked by: ' + r.client));
  c.append(el('p', {}, r.reason), el('p', {}, 'Page: ' + r.url + '  Rule: ' + r.rule));
  (r.where || []).forEach((line) => c.append(el('p', { className: line.startsWith('Sends: ') ? 'sends' : '' }, line)));
  c.append(el('pre', {}, JSON.stringify(r.args, null, 2)));
  if (r.argsFlag) c.append(el('p', { className: 'tag' }, r.argsFlag));
  const edit = el('textarea'); edit.value = JSON.stringify(r.args, null, 2); c.append(edit);
  const buttons = el('div');
  const add = (label, fn) => { const b = el('button', {}, label); b.onclick = fn; buttons.append(b); };
  add(r.needsPresence ? 'Approve with passkey' : 'Approve', () => decide(r.id, { choice: 'approve' }, r));
  if (r.approveAllAllowed) add('Approve all ' + r.tool, () => decide(r.id, { choice: 'approve-all', scope: 'tool' }, r));
  if (r.siteGrant) {
    add(r.tool + ' on this site, 15 min', () => decide(r.id, { choice: 'site-grant', minutes: 15 }, r));
    add('1 h', () => decide(r.id, { choice: 'site-grant', minutes: 60 }, r));
  }
  add('Reject', () => decide(r.id, { choice: 'reject', reason: prompt('Reason for the agent (optional)') || undefined }));
  add('Skip', () => decide(r.id, { choice: 'skip' }));
  add('Modify', () => {
    if (edit.style.display !== 'block') { edit.style.display = 'block'; return; }
    try { decide(r.id, { choice: 'modify', args: JSON.parse(edit.value) }, r); } catch (e) { alert('Not valid JSON: ' + e.message); }
  });
  c.append(buttons, el('p', { className: 'msg', id: 'msg-' + r.id }));
  if (r.needsPresence) c.append(el('p', { className: 'note' }, 'This question needs a human-verified approval: your passkey (PIN, fingerprint or security key) approves it; nothing else can.'));
  if (r.approveAllNote) c.append(el('p', { className: 'note' }, r.approveAllNote));
  (r.siteGrantLines || []).forEach((line) => c.append(el('p', { className: 'note' }, line)));
  if ((r.siteGrantsInForce || []).length) {
    const revoke = el('button', {}, 'Revoke site grants (and reject this)');
    revoke.onclick = () => decide(r.id, { choice: 'revoke-site-grants' });
    c.append(revoke);
  }
  return c;
}
async function refresh() {
  const res = await fetch(base + 'pending');
  const pending = res.ok ? await res.json() : [];
  const ids = new Set(pending.map((r) => r.id));
  for (const id of [...shown]) if (!ids.has(id)) { document.getElementById('req-' + id)?.remove(); shown.delete(id); }
  for (const r of pending) if (!shown.has(r.id)) { document.getElementById('list').append(card(r)); shown.add(r.id); }
  document.getElementById('empty').style.display = pending.length ? 'none' : 'block';
}
refresh(); setInterval(refresh, 1000);
</script></body></html>`;
