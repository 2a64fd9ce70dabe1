import { AgentToolRegistry, silentAdminLogger } from '@aptix/tool-contract';
import { ModeCatalog } from '@aptix/tool-mode-catalog';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createReasoner,
  DEFAULT_OPENAI_BASE_URL,
  ReasonerError,
  ReasonerErrorCode,
  resolveModelConnection,
  type ReasonerToolRegistry,
} from '../src/index.js';
import { createHarness, HARNESS_TOOLS, testModes, type Harness } from './support/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

function startupError(run: () => unknown): ReasonerError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ReasonerError);
    return error as ReasonerError;
  }
  throw new Error('expected a ReasonerError at start-up, but nothing was thrown');
}

describe('the model connection', () => {
  it('says what to set when no model is configured', () => {
    for (const model of [undefined, '', '   ']) {
      const error = startupError(() => createReasoner({ ...h.options, model: { baseURL: h.server.baseURL, model } }));
      expect(error.code).toBe(ReasonerErrorCode.MODEL_NOT_CONFIGURED);
      expect(error.httpStatus).toBe(503);
      expect(error.message).toContain('Set APTIX_MODEL (or "openai.model" in aptix.config.json)');
      expect(error.message).toContain('OPENAI_BASE_URL');
    }
  });

  it('asks for a key when OpenAI itself would be called without one, but not for a local endpoint', () => {
    const error = startupError(() => resolveModelConnection({ model: 'gpt-4.1-mini' }));
    expect(error.code).toBe(ReasonerErrorCode.API_KEY_MISSING);
    expect(error.message).toContain('Set OPENAI_API_KEY');
    expect(resolveModelConnection({ model: 'gpt-4.1-mini', apiKey: 'sk-test' })).toMatchObject({
      baseURL: DEFAULT_OPENAI_BASE_URL,
      apiKey: 'sk-test',
      model: 'gpt-4.1-mini',
    });
    expect(resolveModelConnection({ model: 'llama3', baseURL: 'http://localhost:11434/v1' })).toMatchObject({
      baseURL: 'http://localhost:11434/v1',
      model: 'llama3',
    });
  });

  it('refuses a base URL that is no http(s) URL, and impossible retry and time-out values', () => {
    expect(startupError(() => resolveModelConnection({ model: 'm', baseURL: 'localhost:8000' })).code).toBe(
      ReasonerErrorCode.INVALID_OPTION,
    );
    expect(startupError(() => resolveModelConnection({ model: 'm', baseURL: 'not a url' })).message).toContain(
      'is not a URL',
    );
    expect(startupError(() => resolveModelConnection({ model: 'm', apiKey: 'k', maxRetries: -1 })).message).toContain(
      'maxRetries',
    );
    expect(startupError(() => resolveModelConnection({ model: 'm', apiKey: 'k', timeoutMs: 0 })).message).toContain(
      'timeoutMs',
    );
  });

  it("never picks the key or the endpoint from the environment behind the host's back", () => {
    const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = 'sk-from-env';
    process.env.OPENAI_BASE_URL = 'http://env.invalid/v1';
    try {
      expect(startupError(() => resolveModelConnection({ model: 'm' })).code).toBe(ReasonerErrorCode.API_KEY_MISSING);
      const reasoner = createReasoner({ ...h.options, model: { model: 'm', apiKey: 'k' } });
      expect(reasoner.endpoint).toBe(DEFAULT_OPENAI_BASE_URL);
    } finally {
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
      if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.base;
    }
  });
});

describe('a client built by the host', () => {
  it('is used as it is, with its own endpoint and key; only the model name is required', async () => {
    const client = new OpenAI({ baseURL: h.server.baseURL, apiKey: 'key-of-the-host-client', maxRetries: 0 });
    expect(startupError(() => createReasoner({ ...h.options, client, model: {} })).code).toBe(
      ReasonerErrorCode.MODEL_NOT_CONFIGURED,
    );
    const reasoner = createReasoner({ ...h.options, client, model: { model: 'host-model' } });
    const session = await h.store.createSession({});
    h.server.script({ kind: 'respond', text: 'Hi.' });

    await reasoner.runTurn(session.id, 'Hello');

    expect(reasoner.endpoint).toBe(h.server.baseURL);
    expect(h.server.requests[0]!.headers.authorization).toBe('Bearer key-of-the-host-client');
    expect(h.server.requests[0]!.body.model).toBe('host-model');
  });
});

describe('the tools and modes, checked at start-up', () => {
  it('treats an offered tool without usage metadata as a configuration error naming the tool and the mode', () => {
    // The registry refuses such tools itself; this one lost its metadata on the way (a registry wrapper, a plugin).
    const registry: ReasonerToolRegistry = {
      get: (name) => {
        const tool = h.registry.get(name);
        return tool && name === 'testing_calculator' ? { ...tool, usageMetadata: '  ' } : tool;
      },
      has: (name) => h.registry.has(name),
      names: () => h.registry.names(),
      definitions: (format, names) => h.registry.definitions(format, names),
    };
    const error = startupError(() => createReasoner({ ...h.options, registry }));
    expect(error.code).toBe(ReasonerErrorCode.USAGE_METADATA_MISSING);
    expect(error.message).toContain('tool "testing_calculator" (offered in mode "general") has no ToolUsageMetadata');
    expect(error.message).toContain('the system prompt holds the usage guide of every tool the mode offers');
    expect(error.message).not.toMatch(/(TUL|AGN)-\d{3}/);
  });

  it('refuses a catalog whose mode offers a tool that is not registered', () => {
    const registry = new AgentToolRegistry();
    registry.registerTools(HARNESS_TOOLS.filter((tool) => tool.ToolName !== 'testing_delay'));
    const error = startupError(() => createReasoner({ ...h.options, registry }));
    expect(error.code).toBe(ReasonerErrorCode.CATALOG_MISMATCH);
    expect(error.message).toContain('mode "diagnostics" offers "testing_delay", which is not registered');
  });

  it('says to pass createTool when an offered tool cannot be built', () => {
    const { createTool: _omitted, ...options } = h.options;
    const error = startupError(() => createReasoner({ ...options, logger: silentAdminLogger }));
    expect(error.code).toBe(ReasonerErrorCode.TOOL_UNAVAILABLE);
    expect(error.message).toMatch(/Tool "agent_(list_modes|change_mode)" cannot be built/);
    expect(error.message).toContain('pass createTool');
  });

  it('refuses a step limit below 1 and missing dependencies', () => {
    for (const maxSteps of [0, -1, 1.5])
      expect(startupError(() => createReasoner({ ...h.options, maxSteps })).code).toBe(
        ReasonerErrorCode.INVALID_OPTION,
      );
    const error = startupError(() => createReasoner({ ...h.options, sessions: undefined as never }));
    expect(error.message).toContain('createReasoner needs sessions');
  });

  it('builds instructions and tools for every mode of the catalog', () => {
    for (const mode of testModes()) {
      const prompt = h.reasoner.promptFor(mode.key);
      expect(prompt.toolNames).toEqual([...mode.tools, 'agent_list_modes', 'agent_change_mode']);
      expect(prompt.tools.map((tool) => tool.name)).toEqual(prompt.toolNames);
      expect(prompt.instructions).toContain(mode.systemPromptSummary);
    }
    expect(startupError(() => h.reasoner.promptFor('poetry')).code).toBe(ReasonerErrorCode.UNKNOWN_SESSION_MODE);
  });

  it('follows tools that change while the host runs (a bridged MCP server): prompts are built again when the registry changes', () => {
    const modes = testModes();
    const joined: Record<string, string[]> = {};
    const offeredTools = (key: string) =>
      [
        ...modes.find((mode) => mode.key === key)!.tools,
        ...(joined[key] ?? []),
        'agent_list_modes',
        'agent_change_mode',
      ].filter((name) => h.registry.has(name));
    const reasoner = createReasoner({ ...h.options, offeredTools });
    const general = () => reasoner.promptFor('general');
    expect(general().toolNames).not.toContain('testing_delay');
    const before = general();
    expect(general()).toBe(before); // nothing changed: nothing is built again

    // A tool joins "general" (its registration moves the registry's revision), another leaves.
    joined.general = ['testing_delay'];
    const delay = h.registry.get('testing_delay')!.toolClass;
    h.registry.unregister('testing_delay');
    h.registry.registerTool(delay);
    h.registry.unregister('testing_failure_injection');
    expect(general().toolNames).toEqual([
      'agent_hello_world',
      'testing_calculator',
      'testing_delay',
      'agent_list_modes',
      'agent_change_mode',
    ]);
    expect(general().tools.map((tool) => tool.name)).toContain('testing_delay');
    expect(general().instructions).toContain('testing_delay');
    expect(general().instructions).not.toContain('testing_failure_injection');
  });

  it('refuses a turn in a session whose mode the catalog no longer has, before writing anything', async () => {
    const session = await h.store.createSession({ mode: 'workspace' });
    const smaller = ModeCatalog.fromModes(testModes().filter((mode) => mode.key !== 'workspace'));
    const reasoner = createReasoner({ ...h.options, modeCatalog: smaller });
    await expect(reasoner.runTurn(session.id, 'Hello')).rejects.toMatchObject({
      code: ReasonerErrorCode.UNKNOWN_SESSION_MODE,
      message: expect.stringContaining('Mode "workspace" is not in mode catalog'),
    });
    expect(await h.store.listConversationItems(session.id)).toEqual([]);
  });
});

describe('the error codes', () => {
  it('keeps every code equal to its name, with an HTTP status for each', () => {
    for (const [name, code] of Object.entries(ReasonerErrorCode)) {
      expect(code).toBe(name);
      const status = new ReasonerError(code, 'x').httpStatus;
      expect(status >= 400 && status < 600).toBe(true);
    }
  });
});
