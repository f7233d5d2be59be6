// Whether a recipe would reach a private or loopback address. `tabward serve` takes recipes from whoever holds
// its token, possibly over a network: without --allow-private it refuses recipes that point a browser at this
// machine or its network (the approval page, a router's admin page, a cloud metadata endpoint).

import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { TabwardError } from '../core/errors.ts';
import type { Recipe } from './recipeSchema.ts';

const privateRanges = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  privateRanges.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  privateRanges.addSubnet(net, prefix, 'ipv6');

function isPrivateIp(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return privateRanges.check(mapped, 'ipv4');
  return privateRanges.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The host a URL names is private or loopback, literally or by what it resolves to here. */
export async function isPrivateHost(url: string): Promise<boolean> {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host)) return isPrivateIp(host);
  const addresses = await lookup(host, { all: true }).catch(() => []);
  return addresses.some((entry) => isPrivateIp(entry.address));
}

/** Refuses a recipe whose start or any absolute goto reaches a private or loopback address. */
export async function refusePrivateTargets(recipe: Recipe): Promise<void> {
  const urls = [
    recipe.url,
    ...recipe.steps.flatMap((step) =>
      step.action === 'goto' && /^[a-z]+:/i.test(step.url) ? [step.url] : [],
    ),
  ];
  for (const url of urls) {
    if (await isPrivateHost(url))
      throw new TabwardError(
        'not_allowed',
        `The recipe reaches a private or loopback address (${url}).`,
        'Start tabward serve with --allow-private to run recipes against this machine or its network.',
      );
  }
}
