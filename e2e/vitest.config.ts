import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

export default mergeConfig(sharedConfig, { test: { testTimeout: 600_000, hookTimeout: 600_000 } });
