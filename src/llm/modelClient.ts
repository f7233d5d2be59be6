// Model clients for OpenAI-compatible endpoints (OpenAI, DeepSeek, GLM, local servers) and Anthropic, through
// the AI SDK. Keys come from the environment; nothing here decides what to ask, only how.

import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, type LanguageModel } from 'ai';
import { TabwardError } from '../core/errors.ts';

// The AI SDK prints warnings on the console by default; tabward's stdout is for results.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

export type Provider = 'openai' | 'anthropic';

export interface ModelConfig {
  readonly provider: Provider;
  readonly model: string;
  readonly apiKey: string;
  readonly baseURL?: string;
}

const defaults: Record<Provider, { model: string; baseURL: string }> = {
  openai: { model: 'gpt-4o-mini', baseURL: 'https://api.openai.com/v1' },
  anthropic: { model: 'claude-sonnet-4-5', baseURL: 'https://api.anthropic.com/v1' },
};

export const modelSetupHint =
  'Set ANTHROPIC_API_KEY, or OPENAI_API_KEY (with OPENAI_BASE_URL for DeepSeek, GLM or a local server); ' +
  'TABWARD_MODEL=provider:model picks the model, e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-4-5.';

/**
 * The model to use, from TABWARD_MODEL ("openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5") and the provider's
 * key and base URL variables; undefined when no key is set.
 */
export function modelConfigFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ModelConfig | undefined {
  const wanted = env.TABWARD_MODEL?.trim();
  const [named, ...rest] = wanted ? wanted.split(':') : [];
  if (named && named !== 'openai' && named !== 'anthropic') {
    throw new TabwardError(
      'bad_input',
      `TABWARD_MODEL=${wanted}: the provider must be openai or anthropic.`,
      modelSetupHint,
    );
  }
  const provider: Provider | undefined =
    named === 'openai' || named === 'anthropic'
      ? named
      : env.ANTHROPIC_API_KEY
        ? 'anthropic'
        : env.OPENAI_API_KEY
          ? 'openai'
          : undefined;
  if (!provider) return undefined;
  const apiKey = provider === 'anthropic' ? env.ANTHROPIC_API_KEY : env.OPENAI_API_KEY;
  if (!apiKey) return undefined;
  const baseURL =
    (provider === 'anthropic' ? env.ANTHROPIC_BASE_URL : env.OPENAI_BASE_URL) ?? defaults[provider].baseURL;
  return { provider, model: rest.join(':') || defaults[provider].model, apiKey, baseURL };
}

/** Cheap models for prompt extraction (Haiku-class, as PaiCLI and Webhands use): reading a page needs no more. */
const extractionDefaults: Record<Provider, string> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-haiku-4-5',
};

/**
 * The model for recipes' prompt extraction: TABWARD_EXTRACT_MODEL ("anthropic:claude-haiku-4-5"), else the one
 * TABWARD_MODEL names, else the provider's cheap default.
 */
export function extractionModelFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ModelConfig | undefined {
  const chosen = env.TABWARD_EXTRACT_MODEL?.trim();
  if (chosen) return modelConfigFromEnv({ ...env, TABWARD_MODEL: chosen });
  const config = modelConfigFromEnv(env);
  const named = (env.TABWARD_MODEL ?? '').includes(':');
  return config && !named ? { ...config, model: extractionDefaults[config.provider] } : config;
}

export function languageModel(config: ModelConfig): LanguageModel {
  if (config.provider === 'anthropic') {
    return createAnthropic({ apiKey: config.apiKey, ...(config.baseURL ? { baseURL: config.baseURL } : {}) })(
      config.model,
    );
  }
  const baseURL = config.baseURL ?? defaults.openai.baseURL;
  return createOpenAICompatible({ name: 'openai-compatible', baseURL, apiKey: config.apiKey })(config.model);
}

export interface Completion {
  readonly text: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** One prompt, one answer, under a deadline. */
export async function complete(
  config: ModelConfig,
  request: { system?: string; prompt: string; maxOutputTokens?: number; timeoutMs?: number },
): Promise<Completion> {
  try {
    const result = await generateText({
      model: languageModel(config),
      ...(request.system ? { system: request.system } : {}),
      prompt: request.prompt,
      maxOutputTokens: request.maxOutputTokens ?? 4096,
      maxRetries: 1,
      abortSignal: AbortSignal.timeout(request.timeoutMs ?? 120_000),
    });
    return {
      text: result.text,
      inputTokens: result.usage.inputTokens ?? 0,
      outputTokens: result.usage.outputTokens ?? 0,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new TabwardError('internal', `The model (${config.provider}:${config.model}) failed: ${message}`);
  }
}
