import {
  Content,
  functionToolSchema,
  InvokeResult,
  TypedAgentTool,
  type ObjectSchemaLike,
  type ToolDependencies,
} from '@aptix/tool-contract';

/** A 1×1 red PNG, as base64. */
export const RED_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** The bytes of the PDF document `acme_chart` embeds. */
export const CHART_PDF = Buffer.from('%PDF-1.4');

const NoArgs: ObjectSchemaLike = { type: 'object', properties: {}, required: [] };

/**
 * `acme_chart`: a tool whose result has content blocks (text, an image, an embedded PDF) and a JSON
 * value of its own (`{ months: 3 }`), for tests of what an adapter gives the model.
 */
export class ChartTool extends TypedAgentTool<never> {
  static readonly ToolName = 'acme_chart';
  static readonly ToolUsageMetadata = 'acme_chart draws the sales chart.';
  static getSchema() {
    return functionToolSchema(ChartTool.ToolName, 'Draws the sales chart.', NoArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(NoArgs as never, logger);
  }
  protected run() {
    return InvokeResult.withContent(
      [
        Content.text('Sales:'),
        Content.image(RED_PIXEL_PNG, 'image/png'),
        Content.resource('file:///reports/q3.pdf', { blob: CHART_PDF }, 'application/pdf'),
      ],
      { months: 3 },
    );
  }
}

/** A tool package holding {@link ChartTool}, for an adapter's `tools` option. */
export const contentToolPackage = { tools: [ChartTool] } as const;
