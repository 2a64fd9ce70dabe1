import { Type } from 'typebox';
import { defineTool, InvokeResult } from '@aptix/tool-contract';

const unit = (of: string) => Type.Enum(['celsius', 'fahrenheit', 'kelvin'], { type: 'string', description: `${of}: celsius, fahrenheit or kelvin.` });
const kelvin = { celsius: [1, 273.15], fahrenheit: [5 / 9, 459.67], kelvin: [1, 0] } as const; // kelvin = (value + [1]) × [0]

export const ConvertTemperatureTool = defineTool({
  name: 'acme_convert_temperature', modes: ['general'], // the sessions of these modes offer it
  description: 'Converts a temperature between celsius, fahrenheit and kelvin.',
  args: Type.Object({ value: Type.Number({ description: 'The temperature to convert.' }), from: unit('The unit of value'), to: unit('The unit to convert to'),
    precision: Type.Optional(Type.Integer({ minimum: 0, maximum: 4, description: 'Digits after the decimal point, 0 to 4; 2 when left out.' })) }, { additionalProperties: false }),
  usage: { // the guide models get in the system prompt; its "Arguments:" are the descriptions above
    purpose: 'Convert a temperature between celsius, fahrenheit and kelvin.',
    rules: ['Use it whenever the user asks for a temperature in another unit; do not convert in your head.', 'Do not use it for anything but temperatures.'],
    errors: { BELOW_ABSOLUTE_ZERO: 'the temperature given is colder than absolute zero.' },
    good: '"What is 100 °C in °F?" → { "value": 100, "from": "celsius", "to": "fahrenheit" }',
    bad: '{ "value": "hot", "from": "celsius", "to": "kelvin" }: value must be a number.',
  },
  run({ value, from, to, precision = 2 }, { sessionId = null, conversationId = null }) {
    const k = (value + kelvin[from][1]) * kelvin[from][0];
    if (k < 0) return InvokeResult.fromError(`${value} ${from} is below absolute zero; check the value and its unit.`, 'BELOW_ABSOLUTE_ZERO');
    return { value: Math.round((k / kelvin[to][0] - kelvin[to][1]) * 10 ** precision) / 10 ** precision, unit: to, sessionId, conversationId };
  },
});
