// The WebSocket gate's two decisions made without a browser: where a host name is reached (as the browser's
// --host-resolver-rules would send it) and whether the user set a proxy, which keeps the gate off. The gate's
// judging of real sockets is e2e attackWebSockets.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configuredProxy, hostMapperFrom } from '../../../src/browser/proxySettings.ts';

test('hosts are reached as --host-resolver-rules maps them; first match wins; other hosts as they are', () => {
  const map = hostMapperFrom([
    '--headless',
    '--host-resolver-rules=MAP *.corp.example 10.0.0.7, MAP evil.example 127.0.0.1:8443',
    '--host-resolver-rules=MAP * 127.0.0.1',
  ]);
  assert.equal(map('wiki.corp.example'), '10.0.0.7');
  assert.equal(map('evil.example'), '127.0.0.1');
  assert.equal(map('github.com'), '127.0.0.1');
  assert.equal(hostMapperFrom(['--headless'])('github.com'), 'github.com');
  assert.equal(hostMapperFrom(['--host-resolver-rules=EXCLUDE localhost'])('localhost'), 'localhost');
});

test('a proxy set by switch or by the variables Chromium reads keeps the gate off, and is named', () => {
  assert.equal(configuredProxy(['--proxy-server=http://proxy:3128'], {}), '--proxy-server');
  assert.equal(configuredProxy(['--no-proxy-server'], {}), '--no-proxy-server');
  assert.equal(configuredProxy([], { HTTPS_PROXY: 'http://proxy:3128' }), '$HTTPS_PROXY');
  assert.equal(configuredProxy([], { all_proxy: 'socks5://proxy:1080' }), '$all_proxy');
  assert.equal(configuredProxy(['--proxy-bypass-list=<-loopback>'], { https_proxy: ' ' }), undefined);
  assert.equal(configuredProxy(['--headless'], {}), undefined);
});
