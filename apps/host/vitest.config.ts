import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// These suites start real `aptix` processes, PostgreSQL servers and MCP clients: on a shared 2-core
// machine, with other projects testing beside them, a test can wait far longer than it works. The
// limit is a safety net against hangs, never a timing assertion.
export default mergeConfig(sharedConfig, { test: { testTimeout: 90_000, hookTimeout: 120_000 } });
