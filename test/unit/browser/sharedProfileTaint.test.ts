import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedProfileTaint, type TaintMember } from '../../../src/browser/sharedProfileTaint.ts';

function member(shown: string[] = []): TaintMember & { tainted: string[] } {
  const tainted: string[] = [];
  return {
    tainted,
    taintFromPeer: (origin) => tainted.push(origin),
    secretFromPeer: (origin) => tainted.push(origin),
    ownTainted: () => [...shown, ...tainted],
  };
}

test('a read taints every other member, and every member that joins later (the profile keeps what was read)', () => {
  const profile = new SharedProfileTaint();
  const reader = member();
  const present = member();
  const leaveReader = profile.join(reader);
  profile.join(present);
  profile.read(reader, 'https://github.com');
  assert.deepEqual(reader.tainted, []);
  assert.deepEqual(present.tainted, ['https://github.com']);
  leaveReader();
  const later = member();
  profile.join(later);
  assert.deepEqual(later.tainted, ['https://github.com']);
});

test("a read only a result showed (no hook saw it) taints the others' view, and stays once its reader left", () => {
  const profile = new SharedProfileTaint();
  const reader = member(['https://github.com']);
  const other = member();
  const leaveReader = profile.join(reader);
  profile.join(other);
  assert.deepEqual(profile.taintedBesides(other), ['https://github.com']);
  assert.deepEqual(profile.taintedBesides(reader), []);
  leaveReader();
  assert.deepEqual(profile.taintedBesides(other), ['https://github.com'], 'kept in the profile');
  const later = member();
  profile.join(later);
  assert.deepEqual(later.tainted, ['https://github.com']);
});

test('a secret typed by one member is a typed secret of every other, and of every later one', () => {
  const profile = new SharedProfileTaint();
  const told = (name: string, log: string[]): TaintMember => ({
    taintFromPeer: (origin) => log.push(`${name} read ${origin}`),
    secretFromPeer: (origin) => log.push(`${name} secret ${origin}`),
    ownTainted: () => [],
  });
  const log: string[] = [];
  const typist = told('typist', log);
  profile.join(typist);
  profile.join(told('present', log));
  profile.secretTyped(typist, 'https://login.example');
  profile.join(told('later', log));
  assert.deepEqual(log, [
    'present secret https://login.example',
    'later read https://login.example',
    'later secret https://login.example',
  ]);
});
