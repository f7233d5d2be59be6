// JSON read back from a program under test, for assertions: its shape is what the test asserts, so it is
// typed loosely here, once, rather than with casts at every use.

// biome-ignore lint/suspicious/noExplicitAny: see above
export type Loose = any;

export async function jsonOf(response: Response): Promise<Loose> {
  return response.json();
}
