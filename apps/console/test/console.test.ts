/**
 * The console in headless Chromium against real `aptix serve` processes: what an operator does with
 * it, with and without an API key, the chat against a scripted model, and an accessibility check.
 */
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, respond, ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { ARTIFACTS, chromiumPath, launch, serve, type Host } from './support.js';

const executable = chromiumPath();

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

describe.skipIf(executable === undefined)('the console, in Chromium', () => {
  let browser: Browser;
  let model: ScriptedResponsesServer;
  let host: Host;
  beforeAll(async () => {
    model = await ScriptedResponsesServer.start();
    [browser, host] = await Promise.all([
      launch(executable!),
      serve({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key', APTIX_MODEL: 'scripted-model' }),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
    await model?.close();
  });

  async function open(hash: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${host.url}/console/${hash}`);
    return page;
  }

  it('is served by the host under a strict Content-Security-Policy, with no inline script', async () => {
    const response = await fetch(`${host.url}/console/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await fetch(`${host.url}/console`, { redirect: 'manual' })).headers.get('location')).toBe('/console/');
  });

  it('lists every tool, filters by mode, and shows a tool’s usage guide, schema, strict report and annotations', async () => {
    const page = await open('#/tools');
    await page.locator('[data-tool="testing_delay"]').waitFor();
    await shot(page, 'tools');
    await page.getByLabel('Mode', { exact: true }).selectOption('general');
    await page.locator('[data-tool="agent_hello_world"]').waitFor();
    await expect.poll(() => page.locator('[data-tool="testing_delay"]').count()).toBe(0);
    await page.getByLabel('Mode', { exact: true }).selectOption('');
    await page.getByLabel('Package', { exact: true }).selectOption('@aptix/tool-mode-change');
    await expect
      .poll(async () => page.locator('.tool-list li').allTextContents())
      .toEqual([expect.stringContaining('agent_change_mode')]);
    await page.goto(`${host.url}/console/#/tools/testing_calculator`);
    const panel = page.getByRole('region', { name: 'testing_calculator' });
    await panel.getByRole('heading', { name: 'Error codes' }).waitFor();
    expect(await panel.textContent()).toContain('DIVIDE_BY_ZERO');
    expect(await panel.getByLabel('Parameters schema of testing_calculator').textContent()).toContain('"operation"');
    expect(await panel.textContent()).toContain('@aptix/tool-samples');
    await shot(page, 'tool');
    await page.close();
  });

  it('runs the calculator from a form made from its schema, and shows 42', async () => {
    const page = await open('#/try/testing_calculator');
    await page.locator('#field-operation').selectOption('multiply');
    await page.locator('#field-a').fill('6');
    await page.locator('#field-b').fill('7');
    await page.getByRole('button', { name: 'Run testing_calculator' }).click();
    const result = page.getByLabel('InvokeResult');
    await result.waitFor();
    expect(JSON.parse((await result.textContent())!)).toMatchObject({
      successful: true,
      result: { value: 42, expression: '6 * 7 = 42' },
    });
    await shot(page, 'try');
    await page.close();
  });

  it('shows a validation error next to the field it names', async () => {
    const page = await open('#/try/testing_calculator');
    await page.locator('#field-operation').selectOption('add');
    await page.locator('#field-a').fill('six');
    await page.locator('#field-b').fill('7');
    await page.getByRole('button', { name: 'Run testing_calculator' }).click();
    const error = page.locator('[data-field="a"] .field-error');
    await error.waitFor();
    expect(await error.textContent()).toContain("'a'");
    expect(await page.locator('[data-field="b"] .field-error').count()).toBe(0);
    expect(await page.locator('#field-a').getAttribute('aria-invalid')).toBe('true');
    await page.close();
  });

  it('creates a session, changes its mode, and shows the tool list change', async () => {
    const page = await open('#/sessions');
    await page.getByRole('button', { name: 'Create a session' }).click();
    const offered = page.getByLabel('Tools offered in this session');
    await offered.getByText('agent_hello_world').waitFor();
    expect(await offered.textContent()).not.toContain('testing_delay');
    await page.getByLabel('New mode').selectOption('tool_diagnostics');
    await page.getByLabel('Reason').fill('Testing how tools behave.');
    await page.getByRole('button', { name: 'Change mode' }).click();
    await offered.getByText('testing_delay').waitFor();
    expect(await page.locator('[data-session-mode]').textContent()).toBe('tool_diagnostics');
    expect(await page.locator('table').textContent()).toContain('Testing how tools behave.');
    await shot(page, 'sessions');
    await page.close();
  });

  it('approves a call that waits for a person, and shows its result', async () => {
    const pending = (await (
      await fetch(`${host.url}/v1/tools/testing_issue_refund/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { orderId: 'C-42', amount: 4200, currency: 'EUR' } }),
      })
    ).json()) as { approvalId: string };
    const page = await open('#/approvals');
    const card = page.locator(`[data-approval="${pending.approvalId}"]`);
    await card.waitFor();
    expect(await card.textContent()).toContain('4200 EUR');
    await shot(page, 'approvals');
    await card.getByRole('button', { name: 'Approve' }).click();
    const outcome = page.locator(`[data-approval-result="${pending.approvalId}"]`);
    await outcome.waitFor();
    expect(await outcome.textContent()).toContain('executed');
    expect(await outcome.textContent()).toContain('"refunded"');
    await page.close();
  });

  it('chats in a session against the model, showing each tool call as it happens', async () => {
    model.script(
      respond(undefined, call('call_1', 'testing_calculator', { operation: 'multiply', a: 6, b: 7 })),
      respond('6 × 7 = 42.'),
    );
    const page = await open('#/chat');
    await page.getByLabel('Message').fill('What is 6 times 7?');
    await page.getByRole('button', { name: 'Send' }).click();
    const toolCall = page.locator('[data-tool-call="testing_calculator"]');
    await toolCall.waitFor();
    await page.getByText('6 × 7 = 42.').waitFor();
    expect(await toolCall.textContent()).toContain('"value":42');
    await shot(page, 'chat');
    await page.close();
  });

  it.each(['#/tools/testing_calculator', '#/try/testing_calculator', '#/modes', '#/sessions', '#/approvals', '#/chat'])(
    'passes axe-core on %s with no serious violation',
    async (hash) => {
      const page = await open(hash);
      await page.locator('main h2').first().waitFor();
      await page.waitForLoadState('networkidle');
      const { violations } = await new AxeBuilder({ page }).analyze();
      const serious = violations.filter(
        (violation) => violation.impact === 'serious' || violation.impact === 'critical',
      );
      expect(
        serious.map(
          (violation) =>
            `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
        ),
      ).toEqual([]);
      if (hash === '#/modes') await shot(page, 'modes');
      await page.close();
    },
  );

  it('is usable with the keyboard alone: the views are reached and a tool is run without a mouse', async () => {
    const page = await open('#/try/testing_calculator');
    await page.locator('#field-a').waitFor();
    await page.locator('#field-a').focus();
    await page.keyboard.type('2');
    await page.keyboard.press('Tab'); // past the help text to b
    await page.locator('#field-b').focus();
    await page.keyboard.type('3');
    await page.locator('#field-operation').focus();
    await page.keyboard.press('ArrowDown'); // the first operation: add
    await page.locator('button[type="submit"]').focus();
    await page.keyboard.press('Enter');
    await page.getByLabel('InvokeResult').waitFor();
    expect(await page.getByLabel('InvokeResult').textContent()).toContain('"value": 5');
    await page.close();
  });

  it('says what to set when the host has no model', async () => {
    const bare = await serve({ OPENAI_BASE_URL: '', OPENAI_API_KEY: '', APTIX_MODEL: '' });
    try {
      const page = await browser.newPage();
      await page.goto(`${bare.url}/console/#/chat`);
      await page.getByLabel('Message').fill('Hello?');
      await page.getByRole('button', { name: 'Send' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/APTIX_MODEL|OPENAI/);
      await page.close();
    } finally {
      await bare.stop();
    }
  });
});

describe.skipIf(executable === undefined)('the console on a host that requires an API key', () => {
  const KEY = 'console-test-key-0123456789abcdef';
  let browser: Browser;
  let host: Host;
  beforeAll(async () => {
    [browser, host] = await Promise.all([launch(executable!), serve({ APTIX_API_KEY: KEY })]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('loads, but shows nothing of the host until the key is given; then sends it as the bearer token, for this tab only', async () => {
    const page = await (await browser.newContext()).newPage();
    const authorizations: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/v1/')) authorizations.push(request.headers().authorization ?? '');
    });
    await page.goto(`${host.url}/console/#/tools`);
    await page.getByRole('heading', { name: 'This host requires an API key' }).waitFor();
    expect(await page.locator('.tool-list li').count()).toBe(0);
    await shot(page, 'api-key');
    await page.getByLabel('API key', { exact: true }).fill(KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.locator('[data-tool="testing_calculator"]').waitFor();
    expect(authorizations).toContain(`Bearer ${KEY}`);
    expect(await page.evaluate('[localStorage.length, document.cookie]')).toEqual([0, '']);
    // A new tab (another page of a new context) starts without it.
    const other = await (await browser.newContext()).newPage();
    await other.goto(`${host.url}/console/#/tools`);
    await other.getByRole('heading', { name: 'This host requires an API key' }).waitFor();
    await page.close();
  });

  it('keeps the host’s Host and Origin checks on the console’s own requests', async () => {
    const forged = await fetch(`${host.url}/v1/tools`, {
      headers: { authorization: `Bearer ${KEY}`, origin: 'http://evil.example' },
    });
    expect(forged.status).toBe(403);
    const page = await browser.newPage();
    await page.goto(`${host.url}/console/`);
    const status = await page.evaluate(
      async (key) => (await fetch('/v1/tools', { headers: { authorization: `Bearer ${key}` } })).status,
      KEY,
    );
    expect(status).toBe(200);
    await page.close();
  });
});
