import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

export default mergeConfig(sharedConfig, {
  // The generator test builds, type-checks and tests a generated package in child processes.
  test: { testTimeout: 240_000, hookTimeout: 240_000 },
});
