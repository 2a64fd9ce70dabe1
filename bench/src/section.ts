/**
 * Runs one section of the bench in a process of its own and prints its result as one JSON line on
 * stdout (progress goes to stderr). Each section gets a fresh process, so none times code in a process
 * another section has warmed, loaded or left state in (libraries that hook into promises, pools, JIT).
 *
 * node --import tsx src/section.ts <dispatch|http|telemetry|audit|fresh-hosts|sessions|startup|mcp-bridge|adapters|mcp-sessions|isolation|tool-search> '<options json>'
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adaptersSection } from './sections/adapters.js';
import { dispatchSection } from './sections/dispatch.js';
import { freshHostsSection, type FreshHostOptions } from './sections/fresh-hosts.js';
import { httpSection, type HttpOptions } from './sections/http.js';
import { isolationSection, type IsolationBenchOptions } from './sections/isolation.js';
import { mcpBridgeSection, type BridgeBenchOptions } from './sections/mcp-bridge.js';
import { mcpSessionsSection, type McpSessionOptions } from './sections/mcp-sessions.js';
import { sessionsSection, type SessionOptions } from './sections/sessions.js';
import { coldStartRows, registrationRows } from './sections/startup.js';
import { toolSearchSection } from './sections/tool-search.js';
import { telemetrySection } from './sections/telemetry.js';
import { oauthSection } from './sections/oauth.js';
import { auditSection } from './sections/audit.js';

const [name = '', optionsJson = '{}'] = process.argv.slice(2);
const options = JSON.parse(optionsJson) as Record<string, unknown>;
const log = (line: string) => process.stderr.write(`${line}\n`);

async function run(): Promise<unknown> {
  switch (name) {
    case 'dispatch':
      return { rows: await dispatchSection(log) };
    case 'tool-search':
      return { rows: toolSearchSection(log) };
    case 'http': {
      const scratch = mkdtempSync(join(tmpdir(), 'aptix-bench-http-'));
      try {
        return await httpSection(options as unknown as HttpOptions, log, scratch);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    case 'oauth': {
      const scratch = mkdtempSync(join(tmpdir(), 'aptix-bench-oauth-'));
      try {
        return { rows: await oauthSection(options as unknown as HttpOptions, log, scratch) };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    case 'telemetry': {
      const scratch = mkdtempSync(join(tmpdir(), 'aptix-bench-telemetry-'));
      try {
        return { rows: await telemetrySection(options as unknown as HttpOptions, log, scratch) };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    case 'audit': {
      const scratch = mkdtempSync(join(tmpdir(), 'aptix-bench-audit-'));
      try {
        return { rows: await auditSection(options as unknown as HttpOptions, log, scratch) };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    case 'fresh-hosts': {
      const scratch = mkdtempSync(join(tmpdir(), 'aptix-bench-fresh-'));
      try {
        return { rows: await freshHostsSection(options as unknown as FreshHostOptions, log, scratch) };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    case 'sessions':
      return { rows: await sessionsSection(options as unknown as SessionOptions, log) };
    case 'mcp-sessions':
      return { rows: await mcpSessionsSection(options as unknown as McpSessionOptions, log) };
    case 'startup': {
      const count = Number(options.count ?? 1000);
      const registration = await registrationRows(count, log);
      const starts = await coldStartRows(count, log);
      return { rows: [...registration, ...starts.rows], rss: starts.rss };
    }
    case 'mcp-bridge':
      return { rows: await mcpBridgeSection(options as BridgeBenchOptions, log) };
    case 'adapters':
      return { rows: await adaptersSection(log) };
    case 'isolation':
      return { rows: await isolationSection(options as IsolationBenchOptions, log) };
    default:
      throw new Error(
        `No bench section "${name}". Sections: dispatch, http, fresh-hosts, sessions, startup, mcp-bridge, adapters, mcp-sessions, isolation.`,
      );
  }
}

process.stdout.write(`${JSON.stringify(await run())}\n`);
