// Command-line options shared by the commands that drive a browser, declared once.

import { type Command, InvalidArgumentError, Option } from 'commander';
import { type ToolCategory, toolCategories, writePolicies } from '../core/kinds.ts';

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function positiveInt(name: string) {
  return (value: string): number => {
    const parsed = Number.parseInt(value, 10);
    if (!Number.isInteger(parsed) || parsed <= 0 || String(parsed) !== value.trim()) {
      throw new InvalidArgumentError(`${name} must be a positive whole number.`);
    }
    return parsed;
  };
}

/** A TCP port given with `flag`; 0 asks the system for a free one (the command prints which). */
export function portOption(flag: string) {
  return (value: string): number => {
    const parsed = Number.parseInt(value, 10);
    if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535 || String(parsed) !== value.trim())
      throw new InvalidArgumentError(`${flag} must be a port, 0 to 65535 (0: any free port).`);
    return parsed;
  };
}

export const portNumber = portOption('--port');

/** A whole number from `min` to `max` (seconds, or ms where the flag says so). */
export function secondsOption(flag: string, min = 1, max = 3_600) {
  return (value: string): number => {
    const parsed = Number.parseInt(value, 10);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max || String(parsed) !== value.trim())
      throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}.`);
    return parsed;
  };
}

/** `--tools core,devtools`: the tool categories to offer; core is always on. */
export function toolCategoryList(value: string): ToolCategory[] {
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const unknown = names.filter((name) => !(toolCategories as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(
      `--tools takes a comma list of ${toolCategories.join(', ')}${unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : ''}.`,
    );
  return ['core', ...toolCategories.filter((name) => name !== 'core' && names.includes(name))];
}

/** `--no-warm-up` for the front ends that start an isolated headless browser before the agent's first call. */
export function addWarmUpOption(command: Command): Command {
  return command.option(
    '--no-warm-up',
    'start the browser on the first call that needs it, not while the model thinks before it',
  );
}

export function addBrowserOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--tools <categories>',
        'tool categories, comma-separated: core (always) and devtools (console, network requests, emulate)',
      )
        .argParser(toolCategoryList)
        .default(['core'], 'core'),
    )
    .addOption(
      new Option(
        '--mode <mode>',
        'isolated | shared (your Chrome) | auto (isolated until a login wall and your yes) | remote',
      )
        .choices(['isolated', 'shared', 'auto', 'remote'])
        .default('auto'),
    )
    .option('--headless', 'run browsers tabward launches without a window', true)
    .option('--headed', 'show the window of browsers tabward launches')
    .option(
      '--executable-path <path>',
      'Chrome/Chromium to launch (else TABWARD_CHROME, then the usual install paths)',
    )
    .option(
      '--chrome-arg <arg>',
      'extra Chromium switch for browsers tabward launches (repeatable)',
      collect,
      [],
    )
    .option('--user-data-dir <dir>', "your Chrome's profile dir, to find its DevToolsActivePort")
    .option('--browser-url <url>', "your Chrome's debugging URL, e.g. http://127.0.0.1:9222")
    .option('--ws-endpoint <url>', 'a CDP WebSocket URL (your Chrome, or a browser service in remote mode)')
    .option(
      '--output-dir <dir>',
      "where files the agent's actions download are kept (default: ~/.tabward/downloads/SESSION)",
    )
    .option(
      '--download-max-mb <n>',
      'largest file a download may bring',
      positiveInt('--download-max-mb'),
      50,
    )
    .option(
      '--download-max-count <n>',
      'most files one session keeps',
      positiveInt('--download-max-count'),
      100,
    )
    .option('--rules <file>', 'extra sensitive-page rules, one pattern a line (repeatable)', collect, [])
    .option('--ignore-bad-rules', 'start even when a rules file has bad lines (they are skipped)')
    .option(
      '--secrets <file>',
      'dotenv file of secrets the agent may type by name (NAME@https://origin=value binds one to its site)',
    )
    .option(
      '--secret-env <name>',
      'an environment variable the agent may type as a secret, NAME or NAME@https://origin (repeatable)',
      collect,
      [],
    )
    .option('--audit-log <file>', 'audit log path (default: ~/.tabward/audit.jsonl)')
    .addOption(
      new Option(
        '--policy <policy>',
        'which ordinary writes ask: default (shared/remote only) | strict (always) | sensitive-only',
      )
        .choices([...writePolicies])
        .default('default'),
    )
    .option('--timeout <ms>', 'deadline of one browser step', positiveInt('--timeout'), 15_000)
    .option(
      '--attach-timeout <ms>',
      'how long to wait for your Chrome (it may ask you to allow the connection)',
      positiveInt('--attach-timeout'),
      60_000,
    );
}
