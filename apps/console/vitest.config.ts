import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// One browser and real host processes per file: run the files one after another.
export default mergeConfig(sharedConfig, {
  test: { fileParallelism: false, testTimeout: 60_000, hookTimeout: 90_000 },
});
