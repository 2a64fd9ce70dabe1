/**
 * The Calls view in headless Chromium against a real `aptix serve` with API keys: the audit trail's
 * recent calls with tool, principal, session, outcome, duration and trace id, filtered like GET /v1/audit,
 * each opening its record; refused to a key without the admin permission; and axe-core finds no serious
 * violation.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, chromiumPath, launch, serve, type Host } from './support.js';

const executable = chromiumPath();
const OPS = 'ops-key-0123456789abcdef0123';
const AGENT = 'agent-key-0123456789abcdef012';

describe.skipIf(executable === undefined)('the Calls view, in Chromium', () => {
  let browser: Browser;
  let host: Host;
  let sessionId: string;

  async function invoke(key: string, tool: string, args: unknown, context?: unknown): Promise<void> {
    await fetch(`${host.url}/v1/tools/${tool}/invoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: args, ...(context === undefined ? {} : { context }) }),
    });
  }

  const configDir = mkdtempSync(join(tmpdir(), 'aptix-calls-'));
  const configFile = join(configDir, 'aptix.config.json');

  beforeAll(async () => {
    // The agent key: every tool, no admin permission; the ops key (no entry): everything.
    writeFileSync(
      configFile,
      JSON.stringify({ apiKeys: [`ops=${OPS}`, `agent=${AGENT}`], principals: { agent: { tools: ['*'] } } }),
    );
    [browser, host] = await Promise.all([launch(executable!), serve({ APTIX_CONFIG: configFile })]);
    const created = await fetch(`${host.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${AGENT}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'tool_diagnostics' }),
    });
    sessionId = ((await created.json()) as { id: string }).id;
    await invoke(AGENT, 'testing_issue_refund', { orderId: 'C-1', amount: 12, currency: 'EUR' }, { sessionId });
    await invoke(AGENT, 'testing_issue_refund', { orderId: 'C-2', amount: 'lots', currency: 'EUR' }, { sessionId });
    await invoke(OPS, 'testing_calculator', { operation: 'add', a: 2, b: 3 });
    // Records are written in batches shortly after the calls.
    for (let i = 0; i < 100; i++) {
      const page = await fetch(`${host.url}/v1/audit`, { headers: { authorization: `Bearer ${OPS}` } });
      if (((await page.json()) as { records: unknown[] }).records.length >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  async function open(hash: string, key = OPS): Promise<Page> {
    const context = await browser.newContext();
    await context.addInitScript(`sessionStorage.setItem('aptix.console.apiKey', ${JSON.stringify(key)})`);
    const page = await context.newPage();
    await page.goto(`${host.url}/console/${hash}`);
    return page;
  }

  it('lists the recent calls with tool, principal, session, outcome, duration and trace id', async () => {
    const page = await open('#/calls');
    const rows = page.locator('tr[data-call]');
    await expect.poll(() => rows.count()).toBe(3);
    const cells: string[][] = [];
    for (let i = 0; i < 3; i++) cells.push(await rows.nth(i).locator('td').allTextContents());
    // Newest first: the calculator by ops without a session, the refused refund, the refund.
    expect(cells.map((row) => [row[1], row[2], row[3], row[4]])).toEqual([
      ['testing_calculator', 'ops', '—', 'OK'],
      ['testing_issue_refund', 'agent', sessionId, 'INVALID_ARGUMENTS'],
      ['testing_issue_refund', 'agent', sessionId, 'OK'],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, 'calls.png'), fullPage: true });
    for (const row of cells) {
      expect(row[5]).toMatch(/^\d+ ms$/);
      // Tracing is off on this host: no trace id, said plainly.
      expect(row[6]).toBe('—');
    }
    await page.close();
  });

  it('filters like the audit route, and opens a call’s audit record', async () => {
    const page = await open('#/calls');
    await page.locator('tr[data-call]').first().waitFor();
    await page.getByLabel('Tool', { exact: true }).fill('testing_issue_refund');
    await page.getByLabel('Outcome', { exact: true }).fill('OK');
    await page.getByRole('button', { name: 'Show calls' }).click();
    await expect.poll(() => page.locator('tr[data-call]').count()).toBe(1);
    await page.getByLabel('Principal', { exact: true }).fill('nobody');
    await page.getByRole('button', { name: 'Show calls' }).click();
    await page.getByText('No calls match.').waitFor();
    await page.getByLabel('Principal', { exact: true }).fill('agent');
    await page.getByRole('button', { name: 'Show calls' }).click();
    const link = page.locator('tr[data-call] a').first();
    await link.waitFor();
    await link.click();
    const record = page.locator('dl[data-record]');
    await record.waitFor();
    const text = await record.textContent();
    expect(text).toContain('testing_issue_refund');
    expect(text).toContain(sessionId);
    expect(text).toMatch(/Arguments \(SHA-256\)[0-9a-f]{64}/);
    // The record holds a hash of the arguments, never the arguments.
    expect(text).not.toContain('C-1');
    await page.getByRole('link', { name: 'Back to the calls' }).click();
    await page.locator('tr[data-call]').first().waitFor();
    await page.close();
  });

  it('a filter that looks like SQL is only text, and a key without the admin permission is told it needs it', async () => {
    const page = await open('#/calls');
    await page.locator('tr[data-call]').first().waitFor();
    await page.getByLabel('Outcome', { exact: true }).fill("x' OR '1'='1");
    await page.getByRole('button', { name: 'Show calls' }).click();
    await page.getByText('No calls match.').waitFor();
    await page.close();
    const agent = await open('#/calls', AGENT);
    const alert = agent.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('FORBIDDEN');
    expect(await alert.textContent()).toContain('needs the permission admin');
    expect(await agent.locator('tr[data-call]').count()).toBe(0);
    await agent.close();
  });

  it.each(['#/calls', '#/calls/1'])('passes axe-core on %s with no serious violation', async (hash) => {
    const page = await open(hash);
    await page.locator('main h2').first().waitFor();
    await (hash === '#/calls' ? page.locator('tr[data-call]') : page.locator('dl[data-record]')).first().waitFor();
    await page.waitForLoadState('networkidle');
    const { violations } = await new AxeBuilder({ page }).analyze();
    const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    expect(
      serious.map(
        (violation) =>
          `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
      ),
    ).toEqual([]);
    await page.close();
  });
});
