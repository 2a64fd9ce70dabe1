/** A start-up failure: a bad package, a broken contract, a tool that cannot be built. Names the package, the tool and the rule. */
export class HostStartupError extends Error {
  override readonly name = 'HostStartupError';
}
