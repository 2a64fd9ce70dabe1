/**
 * The Prompts and Resources views in headless Chromium against a real `aptix serve` whose packages carry
 * prompts and resources (the host's fixtures/unit-tools beside the first-party packages): a prompt's
 * arguments become a form and render to its messages, a resource and a template's URI are read, a wrong
 * URI says what is wrong, and axe-core finds no serious violation.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, chromiumPath, launch, serve, type Host } from './support.js';

const executable = chromiumPath();
const UNIT_TOOLS = fileURLToPath(new URL('../../host/test/fixtures/unit-tools', import.meta.url));

describe.skipIf(executable === undefined)('prompts and resources, in Chromium', () => {
  let browser: Browser;
  let host: Host;
  const configDir = mkdtempSync(join(tmpdir(), 'aptix-units-'));
  const configFile = join(configDir, 'aptix.config.json');

  beforeAll(async () => {
    writeFileSync(
      configFile,
      JSON.stringify({
        toolPackages: ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change', UNIT_TOOLS],
      }),
    );
    [browser, host] = await Promise.all([launch(executable!), serve({ APTIX_CONFIG: configFile })]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  async function open(hash: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${host.url}/console/${hash}`);
    return page;
  }

  it("renders a prompt from its arguments form, and a mode's guidance", async () => {
    const page = await open('#/prompts');
    const greeting = page.locator('article[data-prompt="fixture_greeting"]');
    await greeting.waitFor();
    await greeting.getByLabel('name').fill('Ada');
    await greeting.getByLabel('style').fill('formal');
    await greeting.getByRole('button', { name: 'Render fixture_greeting' }).click();
    const messages = greeting.getByRole('list', { name: 'Messages of fixture_greeting' });
    await messages.waitFor();
    expect(await messages.locator('li[data-role="user"]').textContent()).toContain('Greet Ada in a formal style.');
    expect(await messages.locator('li[data-role="assistant"]').textContent()).toContain('Understood.');
    await page.screenshot({ path: join(ARTIFACTS, 'prompts.png'), fullPage: true });

    // A required argument left out: the host's 400 names it, and nothing is shown as rendered.
    const other = await open('#/prompts');
    const empty = other.locator('article[data-prompt="fixture_greeting"]');
    await empty.getByRole('button', { name: 'Render fixture_greeting' }).click();
    const alert = empty.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('name');
    expect(await empty.getByRole('list').count()).toBe(0);

    const general = page.locator('article[data-prompt="mode_general"]');
    await general.getByRole('button', { name: 'Render mode_general' }).click();
    await general.getByRole('list', { name: 'Messages of mode_general' }).waitFor();
    expect(await general.textContent()).toContain('# Current mode: General (general)');
    await page.close();
    await other.close();
  });

  it("reads a listed resource, a template's URI, and says what is wrong with an unknown one", async () => {
    const page = await open('#/resources');
    const readme = page.locator('li[data-resource="fixture://docs/readme"]');
    await readme.waitFor();
    expect(await page.locator('li[data-template="fixture://users/{id}"]').count()).toBe(1);
    await page.locator('li[data-resource="aptix://tools/testing_calculator/guide"]').getByRole('button').click();
    const guide = page.locator('article[data-contents="aptix://tools/testing_calculator/guide"]');
    await guide.waitFor();
    expect(await guide.textContent()).toContain('testing_calculator — Usage Guide');
    await page.screenshot({ path: join(ARTIFACTS, 'resources.png'), fullPage: true });

    await page.getByLabel('URI', { exact: true }).fill('fixture://users/ada');
    await page.getByRole('button', { name: 'Read', exact: true }).last().click();
    const user = page.locator('article[data-contents="fixture://users/ada"]');
    await user.waitFor();
    expect(JSON.parse((await user.locator('pre').textContent())!)).toEqual({ uri: 'fixture://users/ada', id: 'ada' });

    await page.getByLabel('URI', { exact: true }).fill('fixture://nowhere');
    await page.getByRole('button', { name: 'Read', exact: true }).last().click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('RESOURCE_NOT_FOUND');
    expect(await page.locator('article[data-contents]').count()).toBe(0);
    await page.close();
  });

  it.each(['#/prompts', '#/resources'])('passes axe-core on %s with no serious violation', async (hash) => {
    const page = await open(hash);
    await page.locator('main h2').first().waitFor();
    await page
      .locator(hash === '#/prompts' ? 'article[data-prompt]' : 'li[data-resource]')
      .first()
      .waitFor();
    const { violations } = await new AxeBuilder({ page }).analyze();
    const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    expect(serious.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);
    await page.close();
  });
});
