import { Type, type Static } from 'typebox';
import { functionToolSchema, InvokeResult, TypedAgentTool, usage, type AgentToolExecutionContext, type ToolDependencies } from '@aptix/tool-contract';

const unit = (of: string) => Type.Enum(['celsius', 'fahrenheit', 'kelvin'], { type: 'string', description: `${of}: celsius, fahrenheit or kelvin.` });
const kelvin = { celsius: [1, 273.15], fahrenheit: [5 / 9, 459.67], kelvin: [1, 0] } as const; // kelvin = (value + [1]) × [0]
const Args = Type.Object(
  {
    value: Type.Number({ description: 'The temperature to convert.' }),
    from: unit('The unit of value'),
    to: unit('The unit to convert to'),
    precision: Type.Optional(Type.Integer({ minimum: 0, maximum: 4, description: 'Digits after the decimal point, 0 to 4; 2 when left out.' })),
  },
  { additionalProperties: false },
);

export class ConvertTemperatureTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'acme_convert_temperature';
  // The modes whose sessions offer this tool; a host without such a mode skips it with a warning.
  static readonly Modes = ['general'];
  static readonly ToolUsageMetadata = usage`
    acme_convert_temperature — Usage Guide

    Primary purpose:
    - Convert a temperature between celsius, fahrenheit and kelvin.

    Rules:
    - Use it whenever the user asks for a temperature in another unit; do not convert in your head.
    - Do not use it for anything but temperatures.

    Arguments:
    - value (required): The temperature to convert.
    - from (required): The unit of value: celsius, fahrenheit or kelvin.
    - to (required): The unit to convert to: celsius, fahrenheit or kelvin.
    - precision (optional): Digits after the decimal point, 0 to 4; 2 when left out.

    Error codes:
    - BELOW_ABSOLUTE_ZERO: the temperature given is colder than absolute zero.
    - INVALID_ARGUMENTS: the arguments do not match the schema; the message says which. Correct them and call again.
    - TOOL_EXCEPTION: the tool failed unexpectedly. Tell the user; do not retry more than once.

    Good usage:
    - "What is 100 °C in °F?" → { "value": 100, "from": "celsius", "to": "fahrenheit" }

    Bad usage:
    - { "value": "hot", "from": "celsius", "to": "kelvin" }: value must be a number.
  `;

  static getSchema() {
    return functionToolSchema(ConvertTemperatureTool.ToolName, 'Converts a temperature between celsius, fahrenheit and kelvin.', Args);
  }

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }

  protected run({ value, from, to, precision = 2 }: Static<typeof Args>, context: AgentToolExecutionContext) {
    const k = (value + kelvin[from][1]) * kelvin[from][0];
    if (k < 0) return InvokeResult.fromError(`${value} ${from} is below absolute zero; check the value and its unit.`, 'BELOW_ABSOLUTE_ZERO');
    // An optional argument left out is undefined: the executor drops the null OpenAI strict mode sends for it.
    const converted = Math.round((k / kelvin[to][0] - kelvin[to][1]) * 10 ** precision) / 10 ** precision;
    return { value: converted, unit: to, sessionId: context.sessionId ?? null, conversationId: context.conversationId ?? null };
  }
}
