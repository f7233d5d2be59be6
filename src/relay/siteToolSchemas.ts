// A site tool's arguments checked against the page's own JSON Schema before anything reaches the browser
// (docs/architecture.md "Site tools: what a page supplies"): oversize or uncheckable input is refused first, patterns
// run by RE2 in linear time, and each schema is compiled once.

import { Ajv, type ValidateFunction } from 'ajv';
import { TabwardError } from '../core/errors.ts';
import { linearRegExp, refuseUncheckable } from '../core/pageSchemaLimits.ts';
import type { SiteTool } from '../protocol/siteTools.ts';

export class SiteToolSchemas {
  // Patterns by RE2, in linear time: a page's schema must not stall the relay for everyone (core/pageSchemaLimits.ts).
  private readonly ajv = new Ajv({ strict: false, allErrors: true, code: { regExp: linearRegExp } });
  private readonly validators = new Map<string, ValidateFunction>();

  /** Refuses arguments the page's own schema does not take, before anything reaches the browser. */
  validate(tool: SiteTool, args: Record<string, unknown>): void {
    refuseUncheckable(tool, args);
    const key = JSON.stringify(tool.inputSchema);
    let validator = this.validators.get(key);
    if (!validator) {
      try {
        validator = this.ajv.compile(tool.inputSchema);
      } catch (error) {
        throw new TabwardError(
          'bad_input',
          `The page's schema for "${tool.name}" is not a valid JSON Schema (${error instanceof Error ? error.message : String(error)}); calls are refused.`,
        );
      }
      this.validators.set(key, validator);
    }
    if (validator(args)) return;
    const problems = (validator.errors ?? []).map(
      (e) => `${e.instancePath || '(arguments)'} ${e.message ?? ''}`,
    );
    throw new TabwardError(
      'bad_input',
      `The arguments do not match the schema of "${tool.name}": ${problems.join('; ')}. Nothing was sent to the browser.`,
      'Read the schema with getSiteToolDefinition.',
    );
  }
}
