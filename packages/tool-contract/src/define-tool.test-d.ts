// Type tests, run by `typecheck`: defineTool types `run` from `args`, and a usage guide missing a
// section does not compile.
import { Type } from 'typebox';
import { AgentToolRegistry, defineTool, InvokeResult, type ToolDependencies, type ToolList } from './index.js';

const Args = Type.Object(
  {
    value: Type.Number({ description: 'A number.' }),
    unit: Type.Enum(['a', 'b'], { type: 'string', description: 'A unit.' }),
    note: Type.Optional(Type.String({ description: 'A note.' })),
  },
  { additionalProperties: false },
);
const usage = {
  purpose: 'p',
  rules: ['r'],
  arguments: { value: 'v' },
  errors: { NEGATIVE: 'n' },
  good: 'g',
  bad: 'b',
} as const;

const Typed = defineTool({
  name: 'typed_tool',
  description: 'x',
  args: Args,
  usage,
  approval: ({ value }) => value > 3,
  run({ value, unit, note }, context, signal) {
    const u: 'a' | 'b' = unit;
    const n: string | undefined = note;
    if (value < 0) return InvokeResult.fromError('negative', 'NEGATIVE');
    return { value: value * 2, u, n, session: context.sessionId, aborted: signal.aborted };
  },
});
export const name: 'typed_tool' = Typed.ToolName;
new AgentToolRegistry().registerTool(Typed);

interface Client {
  readonly get: () => number;
}
const WithDependencies = defineTool({
  name: 'with_dependencies',
  description: 'x',
  args: Args,
  usage,
  createRun:
    ({ client }: ToolDependencies & { readonly client: Client }) =>
    async ({ value }) => ({ value: value + client.get() }),
});
new WithDependencies({ logger: undefined as never, client: { get: () => 1 } });
// @ts-expect-error the dependencies the tool declares must be given
new WithDependencies({ logger: undefined as never });

export const tools = [Typed, WithDependencies] as const satisfies ToolList;

const Output = Type.Object({ doubled: Type.Number() }, { additionalProperties: false });
defineTool({
  name: 'output_ok',
  description: 'x',
  args: Args,
  outputSchema: Output,
  usage,
  run: ({ value }) => ({ doubled: value * 2 }),
});
defineTool({
  name: 'output_bad',
  description: 'x',
  args: Args,
  outputSchema: Output,
  usage,
  // @ts-expect-error run must return what outputSchema describes (on this line since Prettier split the call)
  run: ({ value }) => ({ tripled: value * 3 }),
});

defineTool({
  name: 'no_arguments_section',
  description: 'x',
  args: Args,
  // Arguments: may be left out (written from the parameters' descriptions); the other five may not.
  usage: { purpose: 'p', rules: 'r', errors: 'e', good: 'g', bad: 'b' },
  run: () => ({}),
});
defineTool({
  name: 'missing_bad',
  description: 'x',
  args: Args,
  // @ts-expect-error the Bad usage section is missing
  usage: { purpose: 'p', rules: 'r', arguments: 'a', errors: 'e', good: 'g' },
  run: () => ({}),
});
defineTool({
  name: 'missing_purpose',
  description: 'x',
  args: Args,
  // @ts-expect-error the Primary purpose section is missing
  usage: { rules: 'r', errors: 'e', good: 'g', bad: 'b' },
  run: () => ({}),
});
defineTool({
  name: 'missing_errors',
  description: 'x',
  args: Args,
  // @ts-expect-error the Error codes section is missing
  usage: { purpose: 'p', rules: 'r', good: 'g', bad: 'b' },
  run: () => ({}),
});
defineTool({
  name: 'empty_rules',
  description: 'x',
  args: Args,
  // @ts-expect-error a section given as a list has at least one item
  usage: { purpose: 'p', rules: [], errors: 'e', good: 'g', bad: 'b' },
  run: () => ({}),
});
defineTool({
  name: 'wrong_argument_type',
  description: 'x',
  args: Args,
  usage,
  // @ts-expect-error value is a number
  run: ({ value }) => ({ upper: value.toUpperCase() }),
});
defineTool({
  name: 'wrong_approval',
  description: 'x',
  args: Args,
  usage,
  // @ts-expect-error the approval policy gets the validated arguments
  approval: ({ missing }) => missing === 1,
  run: () => ({}),
});
// @ts-expect-error run or createRun is needed
defineTool({ name: 'no_run', description: 'x', args: Args, usage });
// @ts-expect-error not both
defineTool({ name: 'both', description: 'x', args: Args, usage, run: () => ({}), createRun: () => () => ({}) });
defineTool({
  name: 'no_this',
  description: 'x',
  args: Args,
  usage,
  run() {
    // @ts-expect-error run is called as a plain function: its class is no `this` to rely on
    return { name: this.name };
  },
});
