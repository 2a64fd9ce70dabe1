import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteSessionStore, type SqliteSessionStore } from '@aptix/agent-sessions/sqlite';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  CapturingAdminLogger,
  functionToolSchema,
  InvokeResult,
  TypedAgentTool,
  usage,
  type AgentToolExecutionContext,
  type AnyAgentToolClass,
  type ToolDependencies,
  type ToolFactory,
} from '@aptix/tool-contract';
import { ListModesTool, ModeCatalog, type AgentModeSummary } from '@aptix/tool-mode-catalog';
import { ModeChangeTool } from '@aptix/tool-mode-change';
import { tools as sampleTools } from '@aptix/tool-samples';
import { Type, type Static } from 'typebox';
import { createReasoner, type Reasoner, type ReasonerEvent, type ReasonerOptions } from '../../src/index.js';
import { ScriptedResponsesServer } from '../../src/testing/index.js';

const EditArgs = Type.Object(
  {
    path: Type.String({ minLength: 1, description: 'The workspace-relative path of the file to edit.' }),
    content: Type.String({ description: 'The new content of the file.' }),
  },
  { additionalProperties: false },
);

/**
 * A client-executed tool (`isToolFullyExecutedOnServer = false`), like the records' workspace patch
 * tool: the server checks the request and prepares the edit; the client applies it on the user's machine.
 */
export class WorkspaceApplyEditTool extends TypedAgentTool<typeof EditArgs> {
  static readonly ToolName = 'workspace_apply_edit';
  static readonly ToolUsageMetadata = usage`
    workspace_apply_edit — Usage Guide

    Primary purpose:
    - Replace the content of a file in the user's workspace; the user's client applies the edit.

    Rules:
    - Call it only when the user asked for the change.

    Arguments:
    - path: the workspace-relative path; content: the whole new content.

    Error codes:
    - PATH_OUTSIDE_WORKSPACE: the path leaves the workspace.

    Good usage:
    - { "path": "README.md", "content": "# Title\\n" }

    Bad usage:
    - { "path": "../etc/passwd", "content": "" }
  `;
  static getSchema() {
    return functionToolSchema(
      WorkspaceApplyEditTool.ToolName,
      "Replaces a file's content in the user's workspace; the client applies it.",
      EditArgs,
    );
  }

  override readonly isToolFullyExecutedOnServer = false;

  constructor({ logger }: ToolDependencies) {
    super(EditArgs, logger);
  }

  protected run({ path, content }: Static<typeof EditArgs>, context: AgentToolExecutionContext) {
    if (path.split('/').includes('..')) {
      return InvokeResult.fromError(
        `workspace_apply_edit refuses "${path}": it leaves the workspace.`,
        'PATH_OUTSIDE_WORKSPACE',
      );
    }
    return {
      edit: { path, bytes: Buffer.byteLength(content) },
      sessionId: context.sessionId ?? null,
      conversationId: context.conversationId ?? null,
    };
  }
}

/** The tools every harness registers: the samples, both mode tools and the client-executed tool. */
export const HARNESS_TOOLS: readonly AnyAgentToolClass[] = [
  ...sampleTools,
  ListModesTool,
  ModeChangeTool,
  WorkspaceApplyEditTool,
];

/** Three modes; `general` is the default. Summaries are distinct, so tests can tell the instructions apart. */
export function testModes(): AgentModeSummary[] {
  return [
    {
      id: 'a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1',
      key: 'general',
      displayName: 'General',
      description: 'Everyday help and quick calculations.',
      systemPromptSummary: 'GENERAL-SUMMARY: answer directly and concisely.',
      isDefault: true,
      tools: ['agent_hello_world', 'testing_calculator', 'testing_failure_injection'],
    },
    {
      id: 'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2',
      key: 'diagnostics',
      displayName: 'Diagnostics',
      description: 'Exercising the tool pipeline.',
      systemPromptSummary: 'DIAGNOSTICS-SUMMARY: run the reference tools exactly as asked.',
      isDefault: false,
      tools: ['testing_ping_pong', 'testing_delay', 'testing_calculator'],
    },
    {
      id: 'c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3',
      key: 'workspace',
      displayName: 'Workspace',
      description: "Editing files on the user's machine.",
      systemPromptSummary: 'WORKSPACE-SUMMARY: change files only when asked.',
      isDefault: false,
      tools: ['workspace_apply_edit'],
    },
  ];
}

export interface Harness {
  readonly server: ScriptedResponsesServer;
  readonly store: SqliteSessionStore;
  readonly registry: AgentToolRegistry;
  readonly executor: AgentToolExecutor;
  readonly catalog: ModeCatalog;
  readonly logger: CapturingAdminLogger;
  readonly createTool: ToolFactory;
  readonly reasoner: Reasoner;
  /** The SQLite file, for a second host on the same database. */
  readonly filename: string;
  /** The options the reasoner was built with, to build another one. */
  readonly options: ReasonerOptions;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly server?: ScriptedResponsesServer;
  /** An existing database file: a "restarted host". */
  readonly filename?: string;
  readonly reasoner?: Partial<ReasonerOptions>;
  /** Tools registered after the harness's own (add them to a mode with `modes`). */
  readonly extraTools?: readonly AnyAgentToolClass[];
  /** Modes in place of {@link testModes}. */
  readonly modes?: AgentModeSummary[];
}

/**
 * A host in miniature: a real registry with real tools, a real executor, a SQLite session store in a
 * temporary folder, the mode catalog, and a Reasoner whose SDK client talks to the scripted server.
 */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const server = options.server ?? (await ScriptedResponsesServer.start());
  const folder = options.filename === undefined ? mkdtempSync(join(tmpdir(), 'aptix-reasoner-')) : undefined;
  const filename = options.filename ?? join(folder!, 'aptix.db');
  const catalog = ModeCatalog.fromModes(options.modes ?? testModes(), 'test modes');
  const store = await openSqliteSessionStore({ filename, modes: catalog });
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools([...HARNESS_TOOLS, ...(options.extraTools ?? [])]);
  const createTool: ToolFactory = (toolClass) => new toolClass({ logger, sessionManager: store, modeCatalog: catalog });
  const executor = new AgentToolExecutor({ registry, logger, createTool });
  const reasonerOptions: ReasonerOptions = {
    registry,
    executor,
    modeCatalog: catalog,
    sessions: store,
    model: { baseURL: server.baseURL, apiKey: 'test-key', model: 'test-model', maxRetries: 0 },
    createTool,
    logger,
    ...options.reasoner,
  };
  const reasoner = createReasoner(reasonerOptions);
  return {
    server,
    store,
    registry,
    executor,
    catalog,
    logger,
    createTool,
    reasoner,
    filename,
    options: reasonerOptions,
    async close() {
      await store.close();
      if (options.server === undefined) await server.close();
      if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Collects a turn's events. */
export function eventLog(): {
  events: ReasonerEvent[];
  onEvent: (event: ReasonerEvent) => void;
  types: () => string[];
} {
  const events: ReasonerEvent[] = [];
  return { events, onEvent: (event) => events.push(event), types: () => events.map((event) => event.type) };
}

/** The `<tool_guidance name="…">` names in instructions, in order. */
export function guidanceNames(instructions: string): string[] {
  return [...instructions.matchAll(/<tool_guidance name="([^"]+)">/g)].map((match) => match[1]!);
}

/** The text of one tool's guidance section. */
export function guidanceOf(instructions: string, name: string): string | undefined {
  const match = new RegExp(`<tool_guidance name="${name}">\\n([\\s\\S]*?)\\n</tool_guidance>`).exec(instructions);
  return match?.[1];
}
