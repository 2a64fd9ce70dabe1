#!/usr/bin/env node
// The `aptix` command. Committed (not built) so npm links it even before the first build.
let main;
try {
  ({ main } = await import('../dist/cli/main.js'));
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli/main.js')) {
    process.stderr.write(
      'aptix: @aptix/host is not built yet. Run `npx nx run @aptix/host:build` (or `npm start`) first.\n',
    );
    process.exit(2);
  }
  throw error;
}
process.exitCode = await main(process.argv);
