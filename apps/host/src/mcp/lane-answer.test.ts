import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ResumableStreams } from './resumable-streams.js';
import { DEFAULT_RESUMABLE_STREAMS, StreamTable } from './stream-table.js';

/**
 * The fast lane's resumable answers (lane-answer.ts) on a recorded reply: one body for an answer ready
 * within the loop turn, an opened and kept stream for a call that runs on, the replay bound, and
 * several answers of one turn sharing its `setImmediate`.
 */

/** A reply that records what was sent: a string body, or the text a stream body carried. */
function fakeReply(destroyed = false) {
  const raw = Object.assign(new EventEmitter(), { destroyed, writableFinished: false });
  const sent: { status?: number; headers?: Record<string, string>; body?: string | Readable; text: string } = {
    text: '',
  };
  const reply = {
    raw,
    code(status: number) {
      sent.status = status;
      return reply;
    },
    headers(headers: Record<string, string>) {
      sent.headers = headers;
      return reply;
    },
    send(body: string | Readable) {
      sent.body = body;
      if (typeof body === 'string') sent.text = body;
      else body.on('data', (chunk: Buffer) => (sent.text += chunk.toString()));
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, raw, sent };
}

const HEADERS = { sseHeaders: () => ({ 'content-type': 'text/event-stream' }) };
const turn = () => new Promise((resolve) => setImmediate(resolve));
const ids = (text: string) => [...text.matchAll(/^id: (\S+)$/gm)].map((match) => match[1]!);

describe('fast-lane resumable answers', () => {
  it('sends an answer ready within the turn as one body, priming event first, and keeps nothing', async () => {
    const streams = new ResumableStreams({ retryMs: 7 });
    const { reply, sent } = fakeReply();
    const answer = streams.answer('s', reply, HEADERS);
    answer.event('{"n":1}');
    answer.end('{"answer":true}');
    expect(typeof sent.body).toBe('string');
    expect(sent.status).toBe(200);
    expect(sent.headers).toEqual({ 'content-type': 'text/event-stream' });
    const [priming, first, last] = ids(sent.text);
    expect(sent.text).toBe(
      `id: ${priming}\nretry: 7\ndata: \n\nid: ${first}\nevent: message\ndata: {"n":1}\n\nid: ${last}\nevent: message\ndata: {"answer":true}\n\n`,
    );
    expect([priming, first, last].map((id) => id!.split('.')[1])).toEqual(['0', '1', '2']);
    await turn();
    expect(streams.size).toBe(0);
  });

  it('opens the stream of a call still running at the end of the turn, sends the rest live, and keeps it for a client that left', async () => {
    const streams = new ResumableStreams();
    const quick = fakeReply();
    const slow = fakeReply();
    const slowAnswer = streams.answer('s', slow.reply, HEADERS);
    const quickAnswer = streams.answer('s', quick.reply, HEADERS);
    slowAnswer.event('{"n":1}');
    quickAnswer.end('{"quick":true}');
    await turn();
    // One turn, two answers: the quick one went out whole, the slow one opened with what it had.
    expect(typeof quick.sent.body).toBe('string');
    expect(typeof slow.sent.body).not.toBe('string');
    expect(streams.size).toBe(1);
    expect(slow.sent.text).toMatch(
      /^id: \S+\.0\nretry: 1000\ndata: \n\nid: \S+\.1\nevent: message\ndata: \{"n":1\}\n\n$/,
    );
    // The client goes: a detach, not the end of the call; the answer is kept for a resume.
    slow.raw.emit('close');
    slowAnswer.end('{"slow":true}');
    expect(slow.sent.text).not.toContain('slow');
    const streamId = ids(slow.sent.text)[0]!.split('.')[0]!;
    const resumed = await streams.resume('s', `${streamId}.1`).text();
    expect(resumed).toBe(
      `id: ${streamId}.1\nretry: 1000\ndata: \n\nid: ${streamId}.2\nevent: message\ndata: {"slow":true}\n\n`,
    );
    streams.clear();
  });

  it('forgets a stream its client read to the end', async () => {
    const streams = new ResumableStreams();
    const { reply, sent } = fakeReply();
    const answer = streams.answer('s', reply, HEADERS);
    await turn();
    expect(streams.size).toBe(1);
    answer.end('{"answer":true}');
    await turn();
    expect(sent.text).toContain('data: {"answer":true}');
    expect(streams.size).toBe(0);
  });

  it('sends nothing to a client gone before its first byte, and keeps nothing it could resume', async () => {
    const streams = new ResumableStreams();
    const { reply, sent } = fakeReply(true);
    const answer = streams.answer('s', reply, HEADERS);
    await turn();
    answer.end('{"answer":true}');
    expect(sent.body).toBeUndefined();
    expect(streams.size).toBe(0);
  });

  it('opens the stream before held events outgrow the replay bound, sends every event, and refuses a resume that would miss some', async () => {
    const streams = new ResumableStreams({ maxStreamBytes: 200 });
    const { reply, raw, sent } = fakeReply();
    const answer = streams.answer('s', reply, HEADERS);
    answer.event(JSON.stringify({ text: 'a'.repeat(100) }));
    answer.event(JSON.stringify({ text: 'b'.repeat(100) }));
    expect(typeof sent.body).not.toBe('string');
    raw.emit('close');
    answer.end('{"answer":true}');
    await turn();
    expect(sent.text).toContain('a'.repeat(100));
    expect(sent.text).toContain('b'.repeat(100));
    const streamId = ids(sent.text)[0]!.split('.')[0]!;
    expect(streams.resume('s', `${streamId}.1`).status).toBe(410);
    streams.clear();
  });

  it('sends an answer larger than the replay bound whole', async () => {
    const streams = new ResumableStreams({ maxStreamBytes: 100 });
    const { reply, sent } = fakeReply();
    streams.answer('s', reply, HEADERS).end(JSON.stringify({ text: 'c'.repeat(200) }));
    await turn();
    expect(sent.text).toMatch(
      /^id: \S+\.0\nretry: 1000\ndata: \n\nid: \S+\.1\nevent: message\ndata: \{"text":"c{200}"\}\n\n$/,
    );
    expect(streams.size).toBe(0);
  });

  it("numbers stream ids in order across blocks of 4096, each 32 hex digits: this host's 16, then the counter's", () => {
    const table = new StreamTable(DEFAULT_RESUMABLE_STREAMS);
    const ids = Array.from({ length: 8200 }, () => table.newId());
    expect(ids.every((id) => /^[0-9a-f]{32}$/.test(id) && id.slice(0, 16) === ids[0]!.slice(0, 16))).toBe(true);
    expect(ids.map((id) => parseInt(id.slice(16), 16))).toEqual(ids.map((_, index) => index));
  });
});
