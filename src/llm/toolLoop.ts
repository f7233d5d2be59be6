// A model conversation with tools: stream the model's text, run the tool calls it makes, feed the results back,
// until it answers without calling a tool (or a step limit). Knows nothing of browsers: tools come as data.

import { jsonSchema, type ModelMessage, stepCountIs, streamText, tool } from 'ai';
import { TabwardError } from '../core/errors.ts';
import { languageModel, type ModelConfig } from './modelClient.ts';

export interface LoopTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly execute: (args: Record<string, unknown>) => Promise<string>;
}

export interface LoopEvents {
  readonly onText?: (delta: string) => void;
  readonly onToolCall?: (name: string, args: unknown) => void;
  readonly onToolResult?: (name: string, result: string) => void;
}

export interface LoopOutcome {
  readonly text: string;
  readonly messages: ModelMessage[];
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export type { ModelMessage };

export async function runToolLoop(
  config: ModelConfig,
  request: {
    system: string;
    messages: ModelMessage[];
    tools: readonly LoopTool[];
    maxSteps?: number;
    signal?: AbortSignal;
  },
  events: LoopEvents = {},
): Promise<LoopOutcome> {
  const tools = Object.fromEntries(
    request.tools.map((entry) => [
      entry.name,
      tool({
        description: entry.description,
        inputSchema: jsonSchema<Record<string, unknown>>(entry.inputSchema),
        execute: async (args: Record<string, unknown>) => {
          events.onToolCall?.(entry.name, args);
          const result = await entry.execute(args);
          events.onToolResult?.(entry.name, result);
          return result;
        },
      }),
    ]),
  );
  let failure: unknown;
  const result = streamText({
    model: languageModel(config),
    system: request.system,
    messages: request.messages,
    tools,
    stopWhen: stepCountIs(request.maxSteps ?? 30),
    maxRetries: 1,
    ...(request.signal ? { abortSignal: request.signal } : {}),
    onError: ({ error }) => {
      failure = error;
    },
  });
  for await (const delta of result.textStream) events.onText?.(delta);
  if (failure) {
    const message = failure instanceof Error ? failure.message.split('\n')[0] : String(failure);
    throw new TabwardError('internal', `The model (${config.provider}:${config.model}) failed: ${message}`);
  }
  const [text, usage, response] = await Promise.all([result.text, result.totalUsage, result.response]);
  return {
    text,
    messages: [...request.messages, ...response.messages],
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
  };
}
