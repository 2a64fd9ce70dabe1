/** Thrown when a tool calls a stand-in dependency: the kit cannot know what the real one would answer. */
export class StandInCalledError extends Error {
  override readonly name = 'StandInCalledError';
}

/** What {@link withStandIns} gives: the dependencies to construct a tool with, and the names it stood in for. */
export interface DependenciesWithStandIns {
  readonly dependencies: Readonly<Record<string, unknown>>;
  /** Names a tool read that nothing provided, in the order they were first read. */
  readonly standIns: ReadonlySet<string>;
}

const FIX =
  'the contract kit stands in for dependencies nobody provided. Provide a real one or a ' +
  'fake: `dependencies` or `createTool` in verifyToolContract/describeToolContract, or the ' +
  'package\'s contract setup module ("aptix": { "contract": { "setup": "./contract.setup.mjs" ' +
  '} } in package.json; see docs/contract.md)';

/**
 * Wraps `provided` so that any other dependency a tool reads is a stand-in: an object whose members
 * are functions that throw {@link StandInCalledError} when called. Tools that check their dependencies
 * by shape (`typeof catalog.getAllModes === 'function'`) can then be built and fed garbage arguments
 * without the host's services; tools that need a real answer get a clear error instead.
 *
 * @example
 * const { dependencies, standIns } = withStandIns('agent_list_modes', { logger });
 * const tool = new ListModesTool(dependencies as ListModesToolDependencies); // modeCatalog is a stand-in
 */
export function withStandIns(toolName: string, provided: Readonly<Record<string, unknown>>): DependenciesWithStandIns {
  const standIns = new Set<string>();
  const made = new Map<string, unknown>();
  const target: Record<string, unknown> = { ...provided };
  const dependencies = new Proxy(target, {
    get(object, key, receiver) {
      if (typeof key === 'symbol' || key in object || key === 'then') return Reflect.get(object, key, receiver);
      let standIn = made.get(key);
      if (standIn === undefined) {
        standIns.add(key);
        standIn = makeStandIn(toolName, key, key, false);
        made.set(key, standIn);
      }
      return standIn;
    },
    has(object, key) {
      return Reflect.has(object, key) || (typeof key === 'string' && key !== 'then');
    },
  });
  return { dependencies, standIns };
}

function makeStandIn(toolName: string, dependency: string, path: string, callable: boolean): unknown {
  const label = `[stand-in for ${path}]`;
  const members = new Map<string, unknown>();
  const fail = (): never => {
    throw new StandInCalledError(`${toolName} called ${path}(), but '${dependency}' is a stand-in: ${FIX}.`);
  };
  const handler: ProxyHandler<object> = {
    get(_object, key) {
      if (key === Symbol.toPrimitive) return () => label;
      if (typeof key === 'symbol' || key === 'then' || key === 'toJSON') return undefined;
      if (key === 'toString' || key === 'valueOf') return () => label;
      let member = members.get(key);
      if (member === undefined) {
        member = makeStandIn(toolName, dependency, `${path}.${key}`, true);
        members.set(key, member);
      }
      return member;
    },
    apply: fail,
    construct: fail,
  };
  // A dependency itself is an object (tools check `typeof x === 'object'`); its members are functions.
  return new Proxy(callable ? function standIn() {} : {}, handler);
}
