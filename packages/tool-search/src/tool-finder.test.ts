import { describe, expect, it } from 'vitest';
import { ToolFinder, type FindableTool } from './tool-finder.js';
import { ToolSearchIndex } from './tool-search-index.js';

const params = { type: 'object', properties: {}, required: [] } as const;
const tools: FindableTool[] = [
  {
    name: 'payments_create_refund',
    description: 'Refunds all or part of a charge to the card it was paid with.',
    usageMetadata: 'Primary purpose: give money back to a customer.',
    parameters: params,
  },
  {
    name: 'payments_list_charges',
    description: 'Lists the charges of a customer, newest first.',
    usageMetadata: 'Primary purpose: see what a customer paid.',
    parameters: params,
  },
  {
    name: 'oncall_who_is_on_call',
    description: 'Tells who is on call now for a service, from the on-call schedule.',
    parameters: params,
  },
  {
    name: 'weather_forecast',
    description: 'Gives the weather forecast for a city for the next days.',
    parameters: params,
  },
];

describe('ToolSearchIndex', () => {
  it('finds a tool by the words a user would use, in other forms than the tool uses', () => {
    const index = new ToolSearchIndex(tools);
    expect(index.search('refunding a payment', 1)).toEqual(['payments_create_refund']);
    expect(index.search('forecasts for Lisbon', 2)[0]).toBe('weather_forecast');
    expect(index.search('who is oncall', 1)).toEqual(['oncall_who_is_on_call']);
  });

  it('answers nothing for a query of stop words or no words, and never more than asked', () => {
    const index = new ToolSearchIndex(tools);
    expect(index.search('the of and', 5)).toEqual([]);
    expect(index.search('  ', 5)).toEqual([]);
    expect(index.search('customer', 1)).toHaveLength(1);
    expect(index.search('customer', 0)).toEqual([]);
  });
});

describe('ToolFinder', () => {
  it('answers the best matches with their parameters and guides, and how to call one in the session', () => {
    const answer = new ToolFinder('billing', tools).find({ query: 'refund', limit: 1 }, 'session-1');
    expect(answer).toMatchObject({ mode: 'billing', sessionId: 'session-1', query: 'refund', total: 4 });
    expect(answer.tools).toEqual([
      {
        name: 'payments_create_refund',
        description: tools[0]!.description,
        parameters: params,
        usage: tools[0]!.usageMetadata,
      },
    ]);
    expect(answer.next).toContain('aptix_call_tool {"name": "<tool>", "arguments": {…}, "sessionId": "session-1"}');
    expect(answer.next).toContain('1 of the mode');
  });

  it('lists the mode in order without a query, and says when nothing matches', () => {
    const finder = new ToolFinder('billing', tools);
    expect(finder.find({}, null).tools.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
    expect(finder.find({ query: 'kubernetes pods' }, null)).toMatchObject({
      tools: [],
      next: expect.stringContaining('No tool of this mode matches "kubernetes pods"'),
    });
    expect(new ToolFinder('empty', []).find({}, null).next).toContain('This mode offers no tools');
  });
});

describe('ToolFinder for a caller who may use only some tools', () => {
  it('fills the limit with tools the caller may use, and counts only those', () => {
    const finder = new ToolFinder('billing', tools);
    const notRefunds = (name: string) => name !== 'payments_create_refund';
    const answer = finder.find({ query: 'refund a customer payment', limit: 1 }, null, notRefunds);
    expect(answer.tools.map((tool) => tool.name)).toEqual(['payments_list_charges']);
    expect(answer.total).toBe(3);
    expect(finder.find({ limit: 10 }, null, notRefunds).tools.map((tool) => tool.name)).not.toContain(
      'payments_create_refund',
    );
  });
});
