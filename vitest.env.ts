/**
 * Every test file starts from an environment without the host's and the OpenAI client's variables.
 * Tests start hosts and CLIs as child processes, which inherit the environment: a developer whose shell
 * sets APTIX_DB or APTIX_API_KEY (as a user who runs a host does) would have those hosts open another
 * database, or ask for a key the test never sends. A test that wants such a variable passes it to its
 * child itself. The tests' own settings (APTIX_TEST_*, such as APTIX_TEST_PG_URL) stay.
 */
for (const name of Object.keys(process.env)) {
  if ((name.startsWith('APTIX_') && !name.startsWith('APTIX_TEST_')) || name.startsWith('OPENAI_'))
    delete process.env[name];
}
