import { join } from 'node:path';
import { HOST_ROOT } from './support.js';

/** The first-party packages and the test package carrying prompts and resources (fixtures/unit-tools), as the unit tests configure a host. */
export const UNIT_PACKAGES: readonly string[] = [
  '@aptix/tool-samples',
  '@aptix/tool-mode-catalog',
  '@aptix/tool-mode-change',
  join(HOST_ROOT, 'test', 'fixtures', 'unit-tools'),
];
