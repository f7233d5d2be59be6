// A server that cannot listen, said in the user's terms: which flag gave the port, and what to do.

import { TabwardError } from '../core/errors.ts';

export function listenError(error: unknown, flag: string, port: number): unknown {
  const code = (error as { code?: string } | null)?.code;
  if (code === 'EADDRINUSE')
    return new TabwardError(
      'bad_input',
      `Port ${port} (${flag}) is in use.`,
      `Stop what is using it, or pick another with ${flag} (${flag} 0 takes any free port).`,
    );
  if (code === 'EACCES')
    return new TabwardError(
      'bad_input',
      `Port ${port} (${flag}) needs privileges this user does not have.`,
      `Pick a port above 1023 with ${flag}.`,
    );
  if (code === 'EADDRNOTAVAIL')
    return new TabwardError(
      'bad_input',
      `The address to listen on for ${flag} ${port} is not on this machine.`,
      'Check --host.',
    );
  return error;
}
