import { createInterface, type Interface } from 'node:readline/promises';
import { ReasonerError, toMessageResponse, type ReasonerEvent, type TurnResult } from '@aptix/reasoner';
import type { AptixHost } from '../aptix-host.js';
import type { Output } from './output.js';

/** Renders a turn's events on a terminal: the answer on stdout, tool calls and mode changes on stderr. */
function renderEvent(event: ReasonerEvent, showText: boolean): void {
  switch (event.type) {
    case 'text_delta':
      if (showText) process.stdout.write(event.delta);
      break;
    case 'tool_call_started':
      process.stderr.write(`\n→ ${event.name} ${event.arguments}\n`);
      break;
    case 'tool_call_progress':
      process.stderr.write(
        `  ${event.name} ${event.progress}${event.total === undefined ? '' : `/${event.total}`}${event.message === undefined ? '' : ` ${event.message}`}\n`,
      );
      break;
    case 'tool_call_finished':
      process.stderr.write(`${event.successful ? '✓' : '✗'} ${event.name}\n`);
      break;
    case 'mode_changed':
      process.stderr.write(
        `[mode ${event.fromMode} → ${event.toMode}${event.branchedSessionId ? `, continuing in session ${event.branchedSessionId}` : ''}]\n`,
      );
      break;
    default:
      break;
  }
}

/** Answers the calls of client-executed tools: a terminal cannot run them, so each gets an error the model reads. */
async function declinePending(host: AptixHost, result: TurnResult, signal: AbortSignal): Promise<TurnResult> {
  let current = result;
  while (current.status === 'pending_tool_calls' && current.pendingToolCalls.length > 0) {
    const outputs = current.pendingToolCalls.map((call) => ({
      callId: call.callId,
      error: { message: `aptix chat cannot run ${call.name}: it runs in a client.`, code: 'CLIENT_TOOL_UNAVAILABLE' },
    }));
    current = await host.reasoner().submitToolOutputs(current.pendingToolCalls[0]!.sessionId, outputs, {
      signal,
      onEvent: (event) => renderEvent(event, false),
    });
  }
  return current;
}

/**
 * `aptix chat`: with `--message`, one turn whose result is printed as the HTTP route's JSON; otherwise
 * an interactive chat that shows tool calls as they happen. Ctrl-C stops the turn in progress.
 */
export async function chat(
  host: AptixHost,
  out: Output,
  options: { session?: string; message?: string },
): Promise<number> {
  const reasoner = host.reasoner();
  let sessionId =
    options.session === undefined ? (await host.createSession()).id : (await host.requireSession(options.session)).id;

  if (options.message !== undefined) {
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    try {
      const result = await declinePending(
        host,
        await reasoner.runTurn(sessionId, options.message, {
          signal: controller.signal,
          onEvent: (event) => renderEvent(event, false),
        }),
        controller.signal,
      );
      out.print(
        toMessageResponse(result),
        (body: { output: string; sessionId: string; mode: string }) =>
          `${body.output}\n(session ${body.sessionId}, mode ${body.mode})`,
      );
      return result.status === 'completed' ? 0 : 1;
    } finally {
      process.off('SIGINT', stop);
    }
  }

  const rl = createInterface({ input: process.stdin, output: process.stderr, prompt: '> ' });
  const lines = new LineQueue(rl);
  process.stderr.write(`Chatting in session ${sessionId}. Ctrl-C stops a turn; Ctrl-D or /exit leaves.\n`);
  try {
    for (;;) {
      // Lines typed (or pasted) while a turn ran are kept, and answered in order.
      const next = await lines.next();
      if (next === undefined) return 0; // input closed
      const line = next.trim();
      if (line === '/exit') return 0;
      if (line === '') continue;
      const controller = new AbortController();
      const stop = () => controller.abort();
      rl.once('SIGINT', stop);
      try {
        const result = await declinePending(
          host,
          await reasoner.runTurn(sessionId, line, {
            signal: controller.signal,
            onEvent: (event) => renderEvent(event, true),
          }),
          controller.signal,
        );
        process.stdout.write(
          result.status === 'completed'
            ? '\n'
            : `\n[${result.status}] ${result.status === 'step_limit' ? result.output : ''}\n`,
        );
        if (result.branchedSessionId) sessionId = result.branchedSessionId;
      } catch (error) {
        if (!(error instanceof ReasonerError)) throw error;
        process.stderr.write(`aptix: ${error.message}\n`);
      } finally {
        rl.off('SIGINT', stop);
      }
    }
  } finally {
    rl.close();
  }
}

/** Every line the terminal or a pipe gives, in order, kept until asked for; a prompt when none is waiting. */
class LineQueue {
  readonly #waiting: string[] = [];
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(private readonly rl: Interface) {
    rl.on('line', (line) => {
      this.#waiting.push(line);
      this.#wake?.();
    });
    rl.once('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  /** The next line, or undefined once the input has closed and every line was taken. */
  async next(): Promise<string | undefined> {
    if (this.#waiting.length === 0 && !this.#closed) {
      this.rl.prompt();
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
    return this.#waiting.shift();
  }
}
