const MAX_DESCRIPTION = 500;

/**
 * Says what was thrown, in words a message can carry, whatever it is: `null`, a string, a number, an
 * Error, an Error whose `message` getter throws, a Proxy whose every trap throws. Never throws itself,
 * never includes a stack trace, and never runs more than the few property reads it guards.
 *
 * @example
 * describeThrown(null)                     // 'null'
 * describeThrown('boom')                   // 'the string "boom"'
 * describeThrown(new TypeError('bad'))     // 'TypeError: bad'
 */
export function describeThrown(value: unknown): string {
  try {
    return cut(describe(value));
  } catch {
    return 'a value that cannot be inspected (reading it threw)';
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return `the string ${JSON.stringify(value.length > MAX_DESCRIPTION ? `${value.slice(0, MAX_DESCRIPTION)}…` : value)}`;
    case 'number':
    case 'boolean':
    case 'bigint':
      return `the ${typeof value} ${String(value)}`;
    case 'symbol':
      return `the symbol ${value.description === undefined ? '' : JSON.stringify(value.description)}`.trimEnd();
    case 'function':
      return 'a function';
    default:
      return describeObject(value as object);
  }
}

function describeObject(value: object): string {
  // Each read is guarded on its own: a Proxy or a throwing getter costs only the part it breaks.
  const name = read(() => (value as { name?: unknown }).name);
  const message = read(() => (value as { message?: unknown }).message);
  const isError = read(() => value instanceof Error) === true;
  if (typeof message === 'string' && message !== '') {
    const firstLine = message.split('\n')[0]!.replace(/\s+at\s.*$/, '');
    return typeof name === 'string' && name !== '' ? `${name}: ${firstLine}` : firstLine;
  }
  if (message === THREW) return `${isError ? 'an Error' : 'an object'} whose message cannot be read (reading it threw)`;
  if (isError) return typeof name === 'string' && name !== '' ? `${name} with no message` : 'an Error with no message';
  if (name === THREW) return 'an object that cannot be inspected (reading it threw)';
  const tag = read(() => Object.prototype.toString.call(value));
  return typeof tag === 'string'
    ? `an object (${tag.slice(8, -1)}) that is not an Error`
    : 'an object that is not an Error';
}

const THREW = Symbol('threw');

function read(get: () => unknown): unknown {
  try {
    return get();
  } catch {
    return THREW;
  }
}

function cut(text: string): string {
  return text.length > MAX_DESCRIPTION + 40 ? `${text.slice(0, MAX_DESCRIPTION)}…` : text;
}
