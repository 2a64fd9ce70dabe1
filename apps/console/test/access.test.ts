/**
 * The console shows the signed-in principal what it may do, and nothing else (issue 32), in headless
 * Chromium against a real `aptix serve` with principals: a restricted key sees its own tools, modes and
 * approvals under "Your access" and no link to the admin views; a key with every permission sees them.
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

describe.skipIf(executable === undefined)('"Your access", in Chromium', () => {
  let browser: Browser;
  let host: Host;
  const configDir = mkdtempSync(join(tmpdir(), 'aptix-access-'));
  const configFile = join(configDir, 'aptix.config.json');

  beforeAll(async () => {
    // The agent key: the testing tools and the general mode only, no admin; the ops key (no entry): everything.
    writeFileSync(
      configFile,
      JSON.stringify({
        apiKeys: [`ops=${OPS}`, `agent=${AGENT}`],
        principals: { agent: { tools: ['testing_*'], modes: ['general'] } },
      }),
    );
    [browser, host] = await Promise.all([launch(executable!), serve({ APTIX_CONFIG: configFile })]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  async function open(hash: string, key: string): Promise<Page> {
    const context = await browser.newContext();
    await context.addInitScript(`sessionStorage.setItem('aptix.console.apiKey', ${JSON.stringify(key)})`);
    const page = await context.newPage();
    await page.goto(`${host.url}/console/${hash}`);
    return page;
  }
  const navLinks = async (page: Page) =>
    (await page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents()).map((text) =>
      text.trim(),
    );

  it('shows a restricted principal its own tools and modes, and no link to the views it may not use', async () => {
    const page = await open('#/access', AGENT);
    const card = page.locator('article[data-principal="agent"]');
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('Signed in with an API key');
    expect(text).toContain('testing_calculator');
    expect(text).not.toContain('agent_hello_world');
    expect(text).toContain('general');
    expect(text).not.toContain('tool_diagnostics');
    expect(text).toContain('Only the ones it made.');
    expect(text).toContain('None: the approvals list');
    expect(await navLinks(page)).toEqual([
      'Tools',
      'Try a tool',
      'Modes',
      'Prompts',
      'Resources',
      'Sessions',
      'Chat',
      'Your access',
    ]);
    await page.screenshot({ path: join(ARTIFACTS, 'access.png'), fullPage: true });
    await page.close();
  });

  it('shows a principal with every permission every view', async () => {
    const page = await open('#/access', OPS);
    await page.locator('article[data-principal="ops"]').waitFor();
    expect(await navLinks(page)).toEqual([
      'Tools',
      'Try a tool',
      'Modes',
      'Prompts',
      'Resources',
      'Sessions',
      'Approvals',
      'Calls',
      'Chat',
      'Your access',
    ]);
    expect(await page.locator('article[data-principal="ops"]').textContent()).toContain('agent_hello_world');
    await page.close();
  });

  it('passes axe-core with no serious violation', async () => {
    const page = await open('#/access', AGENT);
    await page.locator('article[data-principal]').waitFor();
    const { violations } = await new AxeBuilder({ page }).analyze();
    const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    expect(serious.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);
    await page.close();
  });
});
