/**
 * Suite fixtures several test files share: a host whose model is a scripted Responses endpoint, two
 * hosts on one PostgreSQL schema, and a tool package that breaks the contract on purpose.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { afterAll, beforeAll } from 'vitest';
import { postgresAvailable, postgresSchema, scratch, startHost, type RunningHost } from './support.js';

/** `POST` with a JSON body; answers the status and the parsed body. */
export async function postJson(
  host: RunningHost,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(host.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body ?? {}),
  });
  return { status: response.status, body: await response.json() };
}

export interface ScriptedModelSuite {
  readonly host: RunningHost;
  readonly model: ScriptedResponsesServer;
  /** The host's environment: its SQLite file and the scripted model's address. */
  readonly env: NodeJS.ProcessEnv;
  /** Stops the host and starts another on the same database and model, as a restart or a second node would. */
  restart(): Promise<RunningHost>;
}

/** One `aptix serve` whose OpenAI endpoint is a ScriptedResponsesServer, for the enclosing `describe`. */
export function hostWithScriptedModel(): ScriptedModelSuite {
  const space = scratch();
  let model: ScriptedResponsesServer | undefined;
  let host: RunningHost | undefined;
  let env: NodeJS.ProcessEnv | undefined;
  beforeAll(async () => {
    model = await ScriptedResponsesServer.start();
    env = {
      APTIX_DB: space.db,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'test-key',
      APTIX_MODEL: 'scripted-model',
    };
    host = await startHost({ env });
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    space.cleanup();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the host starts in beforeAll: use it inside a test');
    return value;
  };
  return {
    get host() {
      return started(host);
    },
    get model() {
      return started(model);
    },
    get env() {
      return started(env);
    },
    async restart() {
      await started(host).stop();
      host = await startHost({ env: started(env) });
      return host;
    },
  };
}

/** Two `aptix serve` processes on one fresh PostgreSQL schema, for the enclosing `describe`. */
export function hostPairOnPostgres(prefix: string): {
  readonly a: RunningHost;
  readonly b: RunningHost;
  readonly db: string;
} {
  const { db, dispose } = postgresSchema(prefix);
  let pair: [RunningHost, RunningHost] | undefined;
  beforeAll(async () => {
    pair = (await Promise.all([startHost({ env: { APTIX_DB: db } }), startHost({ env: { APTIX_DB: db } })])) as [
      RunningHost,
      RunningHost,
    ];
  });
  afterAll(async () => {
    await Promise.all(pair?.map((host) => host.stop()) ?? []);
    await dispose();
  });
  const host = (index: 0 | 1) => {
    if (pair === undefined) throw new Error('the hosts start in beforeAll: use them inside a test');
    return pair[index];
  };
  return {
    get a() {
      return host(0);
    },
    get b() {
      return host(1);
    },
    db,
  };
}

/**
 * Writes, under `parent`, a tool package "broken-tools" whose one tool has a name the contract refuses
 * ("Bad-Tool": TOOL_NAME_INVALID), and answers its folder.
 */
export function writeBrokenToolPackage(parent: string): string {
  const dir = join(parent, 'broken-tools');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'broken-tools', version: '1.0.0', type: 'module', main: 'index.js' }),
  );
  writeFileSync(
    join(dir, 'index.js'),
    `export class BadTool {
      static ToolName = 'Bad-Tool';
      static ToolUsageMetadata = 'Broken on purpose.';
      static getSchema() { return { type: 'function', name: 'Bad-Tool', description: 'x', parameters: { type: 'object', properties: {}, required: [] } }; }
      async execute() { return { successful: true, result: '{}', errors: [] }; }
    }
    export const tools = [BadTool];`,
  );
  return dir;
}

/** A session store a suite runs against: a fresh SQLite file, or a fresh schema on the PostgreSQL server. */
export interface StoreBackend {
  readonly name: string;
  setup(): { db: string; dispose(): Promise<void> };
}

/** SQLite, and PostgreSQL when the server answers (else its tests are skipped with a warning naming `what`). */
export async function storeBackends(prefix: string, what: string): Promise<StoreBackend[]> {
  const sqlite: StoreBackend = {
    name: 'SQLite',
    setup() {
      const dir = scratch();
      return { db: dir.db, dispose: async () => dir.cleanup() };
    },
  };
  return (await postgresAvailable(what))
    ? [sqlite, { name: 'PostgreSQL', setup: () => postgresSchema(prefix) }]
    : [sqlite];
}
