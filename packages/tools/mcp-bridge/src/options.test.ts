import { describe, expect, it } from 'vitest';
import { McpBridgeError } from './codes.js';
import { parseBridgeOptions, resolveValues } from './options.js';

const stdio = { command: 'node', args: ['server.js'] };

describe('parseBridgeOptions', () => {
  it('accepts a stdio server and a Streamable HTTP server with credentials from the environment', () => {
    expect(parseBridgeOptions({ name: 'files', stdio }).stdio).toEqual(stdio);
    const http = parseBridgeOptions({
      name: 'remote',
      http: {
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: { env: 'REMOTE_TOKEN', prefix: 'Bearer ' }, 'X-Team': 'tools' },
      },
    });
    expect(http.http?.headers?.Authorization).toEqual({ env: 'REMOTE_TOKEN', prefix: 'Bearer ' });
  });

  it('says what is missing when there are no options', () => {
    expect(() => parseBridgeOptions(undefined)).toThrow(/needs options: the MCP server to bridge/);
    // A host hands {} to an entry written without options.
    expect(() => parseBridgeOptions({})).toThrow(/needs options: the MCP server to bridge/);
  });

  it('names the server and the field of an invalid option', () => {
    expect(() => parseBridgeOptions({ name: 'files', stdio: { command: 42 } })).toThrow(
      /MCP server "files" are invalid: options\.stdio\.command/,
    );
    expect(() => parseBridgeOptions({ name: 'files', stdio, prefix: 'Not-Snake' })).toThrow(/options\.prefix/);
    expect(() => parseBridgeOptions({ name: 'files', stdio, extra: true })).toThrow(/extra/);
    expect(() => parseBridgeOptions({ name: 'files', http: { url: 'ftp://x' } })).toThrow(/options\.http\.url/);
  });

  it('wants exactly one of stdio and http', () => {
    expect(() => parseBridgeOptions({ name: 'x' })).toThrow(/exactly one of "stdio"/);
    expect(() => parseBridgeOptions({ name: 'x', stdio, http: { url: 'http://127.0.0.1:1/mcp' } })).toThrow(
      /exactly one of "stdio"/,
    );
  });

  it('refuses credentials written into the file, and says how to pass them instead', () => {
    for (const header of ['Authorization', 'authorization', 'Cookie', 'X-Api-Key', 'X-Auth-Token']) {
      expect(() =>
        parseBridgeOptions({
          name: 'remote',
          http: { url: 'https://mcp.example.com/mcp', headers: { [header]: 'Bearer sk-live-123' } },
        }),
      ).toThrow(McpBridgeError);
    }
    const error = (() => {
      try {
        parseBridgeOptions({
          name: 'remote',
          http: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer sk-live-123' } },
        });
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error?.message).toContain('{ "env": "REMOTE_TOKEN", "prefix": "Bearer " }');
    expect(error?.message).not.toContain('sk-live-123');
    expect(() => parseBridgeOptions({ name: 'gh', stdio: { ...stdio, env: { GITHUB_TOKEN: 'ghp_secret' } } })).toThrow(
      /GITHUB_TOKEN.*never go in the file/,
    );
    expect(() =>
      parseBridgeOptions({ name: 'gh', stdio: { ...stdio, env: { GITHUB_TOKEN: { env: 'GITHUB_TOKEN' } } } }),
    ).not.toThrow();
    const inUrl = (() => {
      try {
        parseBridgeOptions({ name: 'remote', http: { url: 'https://bot:hunter2@mcp.example.com/mcp' } });
      } catch (caught) {
        return (caught as Error).message;
      }
      return '';
    })();
    expect(inUrl).toContain('carries a user name or password');
    expect(inUrl).not.toContain('hunter2');
  });

  it('refuses header names and environment names that could inject', () => {
    expect(() =>
      parseBridgeOptions({ name: 'r', http: { url: 'https://x/mcp', headers: { 'X-Bad\r\nInjected': 'v' } } }),
    ).toThrow(/options\.http\.headers/);
    expect(() => parseBridgeOptions({ name: 'r', stdio: { ...stdio, env: { 'A=B': 'v' } } })).toThrow(
      /options\.stdio\.env/,
    );
    expect(() => parseBridgeOptions({ name: 'r', stdio, rename: { echo: 'Echo Tool' } })).toThrow(/options\.rename/);
    expect(() => parseBridgeOptions({ name: 'r', stdio, modes: ['General Mode'] })).toThrow(/options\.modes/);
  });
});

describe('resolveValues', () => {
  it('reads { env, prefix } from the environment when connecting', () => {
    expect(
      resolveValues({ Authorization: { env: 'T', prefix: 'Bearer ' }, 'X-Team': 'tools' }, 'the header', 'remote', {
        T: 'abc',
      }),
    ).toEqual({ Authorization: 'Bearer abc', 'X-Team': 'tools' });
  });

  it('names the unset variable and the server, never a value', () => {
    expect(() => resolveValues({ Authorization: { env: 'REMOTE_TOKEN' } }, 'the header', 'remote', {})).toThrow(
      'The environment variable REMOTE_TOKEN (for the header Authorization of MCP server "remote") is not set.',
    );
  });
});
