// Test-only: the fixture tools the MCP conformance suite calls by name (its README lists them).
// Plain JavaScript so the suite's host needs no build step for them. Never part of a default host.
import { Type } from 'typebox';
import {
  acceptedAnswer,
  Content,
  functionToolSchema,
  InvokeResult,
  listedRoots,
  rootsRequest,
  sampledText,
  samplingRequest,
  TypedAgentTool,
  usage,
} from '@aptix/tool-contract';

const NoArgs = Type.Object({}, { additionalProperties: false });

/** A fixture tool class: no arguments, `run` decides the answer. */
function fixture(name, description, run) {
  return taskFixture(name, description, NoArgs, {}, (_args, context, signal) => run(context, signal));
}

/** A fixture tool class with arguments, and statics such as TaskSupport. */
function taskFixture(name, description, Args, statics, run) {
  const Tool = class extends TypedAgentTool {
    static ToolName = name;
    static ToolUsageMetadata = usage`
      ${name} — Usage Guide

      Primary purpose:
      - ${description}

      Rules:
      - Only the MCP conformance suite calls it.
      - Call it once per check.

      Arguments:
      - as its schema says (most fixtures take none).

      Error codes:
      - INVALID_ARGUMENTS: an argument is missing, extra or of the wrong type.

      Good usage:
      - the arguments its schema names → the fixture's answer

      Bad usage:
      - { "x": 1 }: not an argument.
    `;
    static getSchema() {
      return functionToolSchema(name, description, Args);
    }
    constructor({ logger }) {
      super(Args, logger);
    }
    run(args, context, signal) {
      return run(args, context, signal);
    }
  };
  Object.assign(Tool, statics);
  return Tool;
}

/** A 1×1 red PNG. */
const RED_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A WAV file of 8 samples of silence: 8 kHz, mono, 8-bit PCM. */
function silentWav() {
  const samples = 8;
  const wav = Buffer.alloc(44 + samples, 0x80);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24); // sample rate
  wav.writeUInt32LE(8000, 28); // byte rate
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples, 40);
  return wav;
}

/** SEP-2243: a parameter that conforming clients also send in an Mcp-Param-Region header. */
const RegionArgs = Type.Object(
  {
    region: Type.String({
      'x-mcp-header': 'Region',
      description: 'Where the call is routed; also sent as the Mcp-Param-Region header.',
    }),
  },
  { additionalProperties: false },
);

class HeaderParamTool extends TypedAgentTool {
  static ToolName = 'test_header_param';
  static ToolUsageMetadata = usage`
    test_header_param — Usage Guide

    Primary purpose:
    - Echoes its region, which MCP clients also send in the Mcp-Param-Region header (SEP-2243).

    Rules:
    - Only the MCP conformance suite calls it.
    - The header and the argument must agree; the host refuses the call otherwise.

    Arguments:
    - region (string): any text.

    Error codes:
    - INVALID_ARGUMENTS: region is missing or not a string.

    Good usage:
    - { "region": "eu-west" } → "Region: eu-west"

    Bad usage:
    - {}: region is required.
  `;
  static getSchema() {
    return functionToolSchema(
      'test_header_param',
      'Echoes its region, also sent as a header, for the conformance suite.',
      RegionArgs,
    );
  }
  constructor({ logger }) {
    super(RegionArgs, logger);
  }
  run({ region }) {
    return `Region: ${region}`;
  }
}

/** The contact schema of the json-schema-2020-12 scenario, with the descriptions and types the contract asks of each argument. */
const CONTACT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string', description: 'Who to contact.' },
    address: { $ref: '#/$defs/address', type: 'object', description: 'Where they live.' },
    contactMethod: { type: 'string', enum: ['phone', 'email'], description: 'How to reach them: phone or email.' },
    phone: { type: 'string', description: 'Phone number; required when contactMethod is phone.' },
    email: { type: 'string', description: 'Email address; required otherwise.' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

class JsonSchema202012Tool extends TypedAgentTool {
  static ToolName = 'json_schema_2020_12_tool';
  static ToolUsageMetadata = usage`
    json_schema_2020_12_tool — Usage Guide

    Primary purpose:
    - Echoes a contact whose parameters are a JSON Schema 2020-12 schema, for the conformance suite.

    Rules:
    - Only the MCP conformance suite calls it.

    Arguments:
    - name, address, contactMethod, phone, email: a contact; phone or email is required.

    Error codes:
    - INVALID_ARGUMENTS: the contact does not match the schema.

    Good usage:
    - { "name": "Ada", "email": "ada@example.com" }

    Bad usage:
    - { "name": "Ada" }: neither phone nor email.
  `;
  static getSchema() {
    return functionToolSchema(JsonSchema202012Tool.ToolName, 'Tool with JSON Schema 2020-12 features', CONTACT);
  }
  constructor({ logger }) {
    super(CONTACT, logger);
  }
  run(contact) {
    return { contact };
  }
}

/** SEP-2575 subscriptions: a tool that comes and goes, and the tool that makes it (the package follows its own tools). */
const DynamicTool = Object.assign(
  fixture(
    'test_dynamic_tool',
    'Exists only after test_trigger_tool_change added it, for the conformance suite.',
    () => 'Here for now.',
  ),
  { Modes: ['conformance'] },
);
let reportTools;
let dynamicOffered = false;

/** Takes the host's toolsChanged, so test_trigger_tool_change can change this package's tool list. */
export function createTools(host) {
  reportTools = host.toolsChanged;
  return [];
}

export const tools = [
  fixture(
    'test_trigger_tool_change',
    'Adds test_dynamic_tool, or removes it again, so listeners hear tools/list_changed, for the conformance suite.',
    () => {
      if (reportTools === undefined)
        return InvokeResult.fromError(
          "This host does not follow the package's tools (it runs in worker isolation).",
          'NOT_FOLLOWED',
        );
      dynamicOffered = !dynamicOffered;
      reportTools(dynamicOffered ? [...tools, DynamicTool] : tools);
      return dynamicOffered ? 'Added test_dynamic_tool.' : 'Removed test_dynamic_tool.';
    },
  ),
  HeaderParamTool,
  fixture(
    'test_simple_text',
    'Answers with a fixed text, for the conformance suite.',
    () => 'This is a simple text response for testing.',
  ),
  fixture('test_error_handling', 'Always fails, for the conformance suite.', () =>
    InvokeResult.fromError('This tool intentionally returns an error for testing', 'FIXTURE_ERROR'),
  ),
  fixture(
    'test_tool_with_progress',
    'Reports progress 0, 50 and 100 of 100, for the conformance suite.',
    async (context) => {
      for (const progress of [0, 50, 100]) {
        context.reportProgress?.({ progress, total: 100, message: `step ${progress / 50 + 1} of 3` });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return 'Progress reported: 0, 50 and 100 of 100.';
    },
  ),
  ...['test_tool_with_logging', 'test_logging_tool'].map((name) =>
    // 2025 clients ask for entries with logging/setLevel; 2026-07-28 ones per request, with _meta's logLevel.
    fixture(
      name,
      'Sends three log entries to the caller while it runs, for the conformance suite.',
      async (context) => {
        for (const message of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
          context.log?.('info', message);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return 'Logged three entries.';
      },
    ),
  ),
  // SEP-1699: the host closes a 2025-11-25 response stream after mcp.streamHoldMs (500 ms in this
  // suite's configuration); this call outlasts it, and the client resumes the stream to get its result,
  // before the hold closes the resumed connection too (the suite reconnects once).
  fixture(
    'test_reconnection',
    "Answers after 700 ms, outlasting the host's stream hold, for the conformance suite.",
    async (_context, signal) => {
      await new Promise((resolve) => setTimeout(resolve, 700));
      return signal?.aborted ? 'Cancelled.' : 'Reconnection test completed.';
    },
  ),
  fixture('test_image_content', 'Answers with one image, a 1x1 red PNG, for the conformance suite.', () =>
    InvokeResult.withContent([Content.image(RED_PIXEL_PNG, 'image/png')]),
  ),
  fixture('test_audio_content', 'Answers with one sound, a short silent WAV, for the conformance suite.', () =>
    InvokeResult.withContent([Content.audio(silentWav(), 'audio/wav')]),
  ),
  fixture('test_embedded_resource', 'Answers with one embedded text document, for the conformance suite.', () =>
    InvokeResult.withContent([
      Content.resource('test://embedded-resource', { text: 'This is an embedded resource content.' }, 'text/plain'),
    ]),
  ),
  fixture(
    'test_multiple_content_types',
    'Answers with text, an image and an embedded JSON document, for the conformance suite.',
    () =>
      InvokeResult.withContent([
        Content.text('Multiple content types test:'),
        Content.image(RED_PIXEL_PNG, 'image/png'),
        Content.resource('test://mixed-content-resource', { text: '{"test":"data","value":123}' }, 'application/json'),
      ]),
  ),
  JsonSchema202012Tool,
];

// --- Questions to the user mid-call (MCP input_required, SEP-2322), through InvokeResult.inputRequired
// and context.input. The host seals each tool's state with HMAC; these tools only read it back.
/** A form question with string or boolean fields, all required. */
function question(message, properties) {
  return {
    method: 'elicitation/create',
    params: { message, requestedSchema: { type: 'object', properties, required: Object.keys(properties) } },
  };
}
const cannotAsk = (what) =>
  InvokeResult.fromError(
    `This call needs ${what} from the user, and this client cannot be asked (it declared no elicitation capability), so nothing was done.`,
    'INPUT_REQUIRED',
  );

tools.push(
  fixture(
    'test_input_required_result_elicitation',
    "Asks the user's name, then greets them, for the conformance suite.",
    (context) => {
      const name = acceptedAnswer(context.input, 'user_name')?.name;
      if (typeof name === 'string' && name.trim() !== '') return `Hello, ${name}!`;
      if (context.input?.canAsk !== true) return cannotAsk('a name');
      // No usable answer (none yet, another key, a malformed one): ask again.
      return InvokeResult.inputRequired({
        inputRequests: { user_name: question('What is your name?', { name: { type: 'string' } }) },
      });
    },
  ),
  fixture(
    'test_input_required_result_request_state',
    'Asks for a confirmation and checks, on the retry, the state it attached, for the conformance suite.',
    (context) => {
      const confirmed = acceptedAnswer(context.input, 'confirm')?.ok === true;
      if (confirmed && context.input?.state?.step === 'confirm')
        return 'state-ok: the confirmation came back with the state this call attached.';
      if (context.input?.canAsk !== true) return cannotAsk('a confirmation');
      return InvokeResult.inputRequired({
        inputRequests: { confirm: question('Please confirm', { ok: { type: 'boolean' } }) },
        state: { step: 'confirm' },
      });
    },
  ),
  fixture(
    'test_input_required_result_tampered_state',
    'Asks for a confirmation with a state the host seals; an altered state is refused before it runs, for the conformance suite.',
    (context) => {
      if (acceptedAnswer(context.input, 'confirm')?.ok === true && context.input?.state?.step === 'confirm')
        return 'Confirmed, with the state this call attached.';
      if (context.input?.canAsk !== true) return cannotAsk('a confirmation');
      return InvokeResult.inputRequired({
        inputRequests: { confirm: question('Please confirm', { ok: { type: 'boolean' } }) },
        state: { step: 'confirm' },
      });
    },
  ),
  fixture(
    'test_input_required_result_multi_round',
    'Asks a name, then a colour, over two rounds whose state grows, for the conformance suite.',
    (context) => {
      const state = context.input?.state;
      if (state?.round === 2) {
        const color = acceptedAnswer(context.input, 'step2')?.color;
        if (typeof color === 'string') return `${state.name} likes ${color}.`;
        return InvokeResult.inputRequired({
          inputRequests: { step2: question('Step 2: What is your favorite color?', { color: { type: 'string' } }) },
          state,
        });
      }
      const name = acceptedAnswer(context.input, 'step1')?.name;
      if (state?.round === 1 && typeof name === 'string') {
        return InvokeResult.inputRequired({
          inputRequests: { step2: question('Step 2: What is your favorite color?', { color: { type: 'string' } }) },
          state: { round: 2, name },
        });
      }
      if (context.input?.canAsk !== true) return cannotAsk('a name and a colour');
      return InvokeResult.inputRequired({
        inputRequests: { step1: question('Step 1: What is your name?', { name: { type: 'string' } }) },
        state: { round: 1 },
      });
    },
  ),
  fixture(
    'test_input_required_result_capabilities',
    'Asks for a confirmation by whatever the client declared: its user (elicitation), else its model (sampling), for the conformance suite.',
    (context) => {
      if (acceptedAnswer(context.input, 'confirm')?.ok === true) return 'Confirmed.';
      const modelSays = sampledText(context.input, 'confirm_by_model');
      if (modelSays !== undefined) return `The client's model answered: ${modelSays}`;
      if (context.input?.canAsk === true)
        return InvokeResult.inputRequired({
          inputRequests: { confirm: question('Please confirm', { ok: { type: 'boolean' } }) },
        });
      if (context.input?.canSample === true)
        return InvokeResult.inputRequired({
          inputRequests: {
            confirm_by_model: samplingRequest('Should the operation go ahead? Answer yes or no.', { maxTokens: 10 }),
          },
        });
      return cannotAsk('a confirmation');
    },
  ),
);

// --- The client's model (sampling/createMessage) and roots (roots/list), asked the same way: the host
// refuses a round the client cannot answer (SAMPLING_UNAVAILABLE, ROOTS_UNAVAILABLE; -32021 on 2026-07-28).
/** The roots the client listed, as text. */
const rootsText = (roots) =>
  roots.length === 0 ? 'no roots' : roots.map((root) => `${root.name ?? '(unnamed)'} at ${root.uri}`).join(', ');
tools.push(
  taskFixture(
    'test_sampling',
    "Asks the client's model the given prompt and answers with its response, for the conformance suite.",
    Type.Object(
      { prompt: Type.String({ description: "The prompt for the client's model." }) },
      { additionalProperties: false },
    ),
    {},
    ({ prompt }, context) => {
      const text = sampledText(context.input, 'answer');
      if (text !== undefined) return `LLM response: ${text}`;
      return InvokeResult.inputRequired({ inputRequests: { answer: samplingRequest(prompt, { maxTokens: 100 }) } });
    },
  ),
  fixture(
    'test_missing_capability',
    "Needs the client's model (sampling): a client that did not declare sampling gets -32021, for the conformance suite.",
    (context) => {
      const text = sampledText(context.input, 'answer');
      if (text !== undefined) return `The client's model answered: ${text}`;
      return InvokeResult.inputRequired({
        inputRequests: { answer: samplingRequest('Say hello.', { maxTokens: 20 }) },
      });
    },
  ),
  fixture(
    'test_input_required_result_sampling',
    "Asks the client's model the capital of France, then answers with its response, for the conformance suite.",
    (context) => {
      const text = sampledText(context.input, 'capital_question');
      if (text !== undefined) return `The client's model says: ${text}`;
      return InvokeResult.inputRequired({
        inputRequests: { capital_question: samplingRequest('What is the capital of France?', { maxTokens: 100 }) },
      });
    },
  ),
  fixture(
    'test_input_required_result_list_roots',
    "Asks the client's roots, then names them, for the conformance suite.",
    (context) => {
      const roots = listedRoots(context.input, 'client_roots');
      if (roots !== undefined) return `The client's roots: ${rootsText(roots)}.`;
      return InvokeResult.inputRequired({ inputRequests: { client_roots: rootsRequest() } });
    },
  ),
  fixture(
    'test_input_required_result_multiple_inputs',
    "Asks the user's name, a greeting from the client's model and the client's roots in one round, for the conformance suite.",
    (context) => {
      const name = acceptedAnswer(context.input, 'user_name')?.name;
      const greeting = sampledText(context.input, 'greeting');
      const roots = listedRoots(context.input, 'client_roots');
      if (
        typeof name === 'string' &&
        greeting !== undefined &&
        roots !== undefined &&
        context.input?.state?.round === 1
      )
        return `${greeting} ${name}; your roots: ${rootsText(roots)}.`;
      return InvokeResult.inputRequired({
        inputRequests: {
          user_name: question('What is your name?', { name: { type: 'string' } }),
          greeting: samplingRequest('Generate a greeting', { maxTokens: 50 }),
          client_roots: rootsRequest(),
        },
        state: { round: 1 },
      });
    },
  ),
);

// --- The 2025-era elicitation scenarios: the same InvokeResult.inputRequired; on a 2025 session the host
// sends each question as elicitation/create and calls the tool again with the answer.
/** The answer under `key` as the scenarios print it: the action, and the content when accepted. */
function answerText(context, key) {
  const answer = context.input?.responses[key];
  if (typeof answer !== 'object' || answer === null || typeof answer.action !== 'string') return undefined;
  return `action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}
/** A fixture that asks one question under `key` and answers with `prefix` and the user's answer. */
function askOnce(name, description, Args, ask, prefix) {
  return taskFixture(name, description, Args, {}, (args, context) => {
    const answer = answerText(context, 'answer');
    if (answer !== undefined) return `${prefix}${answer}`;
    if (context.input?.canAsk !== true) return cannotAsk('an answer');
    return InvokeResult.inputRequired({
      inputRequests: { answer: { method: 'elicitation/create', params: ask(args) } },
    });
  });
}
tools.push(
  askOnce(
    'test_elicitation',
    'Asks the user for a username and an email with the given message, for the conformance suite.',
    Type.Object(
      { message: Type.String({ description: 'The message to show the user.' }) },
      { additionalProperties: false },
    ),
    ({ message }) => ({
      message,
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    }),
    'User response: ',
  ),
  askOnce(
    'test_streaming_elicitation',
    'Asks the user to confirm, on a stateless request whose answer must carry the question (input_required), never a request of its own, for the conformance suite.',
    NoArgs,
    () => ({
      message: 'Please confirm to continue',
      requestedSchema: {
        type: 'object',
        properties: { confirmed: { type: 'boolean', description: 'Whether to continue' } },
        required: ['confirmed'],
      },
    }),
    'Confirmation: ',
  ),
  askOnce(
    'test_elicitation_sep1034_defaults',
    'Asks the user a form whose fields all carry defaults (SEP-1034), for the conformance suite.',
    NoArgs,
    () => ({
      message: 'Please review the defaults and accept or change them',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: {
            type: 'string',
            description: 'User status',
            enum: ['active', 'inactive', 'pending'],
            default: 'active',
          },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
      },
    }),
    'Elicitation completed: ',
  ),
  askOnce(
    'test_elicitation_sep1330_enums',
    'Asks the user a form with every enum variant (SEP-1330), for the conformance suite.',
    NoArgs,
    () => ({
      message: 'Please choose the options',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
          titledMulti: {
            type: 'array',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
      },
    }),
    'Elicitation completed: ',
  ),
);

// --- Long calls as tasks (the io.modelcontextprotocol/tasks extension, SEP-2663): TaskSupport on the tool class.
/** Waits `ms`, or until `signal` aborts: then rejects with the signal's reason, which tells the executor the tool stopped. */
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

tools.push(
  taskFixture(
    'greet',
    'Greets a name at once (never a task), for the conformance suite.',
    Type.Object({ name: Type.String({ description: 'Who to greet.' }) }, { additionalProperties: false }),
    {},
    ({ name }) => InvokeResult.withContent([Content.text(`Hello, ${name}!`)], { greeting: `Hello, ${name}!` }),
  ),
  taskFixture(
    'confirm_delete',
    'Asks the user to confirm deleting a file, as a task that waits for the answer (a fixture: nothing is deleted), for the conformance suite.',
    Type.Object(
      { filename: Type.String({ description: 'The file the question names.' }) },
      { additionalProperties: false },
    ),
    { TaskSupport: 'optional' },
    ({ filename }, context) => {
      const answer = acceptedAnswer(context.input, 'confirm');
      if (answer !== undefined)
        return answer.confirm === true
          ? `Confirmed: ${filename} would be deleted (a fixture: nothing was).`
          : `Not confirmed: ${filename} stays.`;
      if (context.input?.canAsk !== true) return cannotAsk('a confirmation');
      return InvokeResult.inputRequired({
        inputRequests: { confirm: question(`Delete ${filename}?`, { confirm: { type: 'boolean' } }) },
      });
    },
  ),
  taskFixture(
    'multi_input',
    'Asks two questions at once, as a task that waits for both answers, for the conformance suite.',
    NoArgs,
    { TaskSupport: 'optional' },
    (_args, context) => {
      const [first, second] = [acceptedAnswer(context.input, 'first'), acceptedAnswer(context.input, 'second')];
      if (first !== undefined && second !== undefined)
        return `Both answered: ${String(first.name)} and ${String(second.name)}.`;
      if (context.input?.canAsk !== true) return cannotAsk('two answers');
      const ask = (n) =>
        question(`Question ${n}: your name, and confirm?`, { name: { type: 'string' }, confirm: { type: 'boolean' } });
      return InvokeResult.inputRequired({ inputRequests: { first: ask(1), second: ask(2) } });
    },
  ),
  taskFixture(
    'slow_compute',
    'Waits the given number of seconds, then answers; runs as a task for clients that support them, for the conformance suite.',
    Type.Object(
      { seconds: Type.Number({ minimum: 0, maximum: 60, description: 'How long to wait, in seconds.' }) },
      { additionalProperties: false },
    ),
    { TaskSupport: 'optional', TimeoutMs: 70_000 },
    async ({ seconds }, _context, signal) => {
      await sleep(seconds * 1000, signal);
      return `Computed after ${seconds} seconds.`;
    },
  ),
  taskFixture(
    'failing_job',
    'Fails as a tool after about a second; runs only as a task, for the conformance suite.',
    NoArgs,
    { TaskSupport: 'required' },
    async (_args, _context, signal) => {
      await sleep(1000, signal);
      return InvokeResult.fromError('failing_job failed, as it always does.', 'FIXTURE_ERROR');
    },
  ),
  // A task is failed (a JSON-RPC error, no result) only when the host ended the call without the tool's
  // answer; this one outlasts its 200 ms time-out, so the executor stops it (TIMEOUT).
  taskFixture(
    'protocol_error_job',
    'Runs past its 200 ms time-out, so the host stops it: a task that fails (not a tool error); for the conformance suite.',
    NoArgs,
    { TaskSupport: 'optional', TimeoutMs: 200 },
    async (_args, _context, signal) => {
      await sleep(10_000, signal);
      return 'Finished (never: the host stops it at 200 ms).';
    },
  ),
  // SEP-2322 then SEP-2663: asks the user's name on tools/call (TaskInput 'before'), and the round that
  // brings the answer becomes the task, whose result names them.
  taskFixture(
    'test_tool_with_task',
    "Asks the user's name on tools/call, then greets them as a task, for the conformance suite.",
    NoArgs,
    { TaskSupport: 'required', TaskInput: 'before' },
    async (_args, context, signal) => {
      const name = acceptedAnswer(context.input, 'user_name')?.name;
      if (typeof name !== 'string' || name.trim() === '') {
        if (context.input?.canAsk !== true) return cannotAsk('a name');
        return InvokeResult.inputRequired({
          inputRequests: { user_name: question('What is your name?', { name: { type: 'string' } }) },
        });
      }
      await sleep(200, signal);
      return `Hello, ${name}: the task finished.`;
    },
  ),
);
