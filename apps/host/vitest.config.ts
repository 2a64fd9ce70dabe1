import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// These suites start real `aptix` processes, PostgreSQL servers and MCP clients: on a shared 2-core
// machine, with other projects testing beside them, a test can wait far longer than it works. The
// limit is a safety net against hangs, never a timing assertion.
//
// Two files at a time: vitest's default on 2 cores is one worker (the cores less one), and the files
// here mostly wait on their child processes, so one at a time left a core idle for most of the run.
export default mergeConfig(sharedConfig, { test: { testTimeout: 90_000, hookTimeout: 120_000, maxWorkers: 2 } });
