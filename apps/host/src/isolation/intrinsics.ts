/**
 * The JavaScript built-ins an isolated worker's protocol, executor and argument checks rely on, as they
 * were once the package had loaded, and how to tell that a package changed them since
 * (`Object.prototype.polluted = …`, a replaced `Array.prototype.push`). Runs in the worker; everything
 * it uses itself is taken when this module loads, before the package does.
 */
const { getOwnPropertyDescriptor, getPrototypeOf, isExtensible, is } = Object;
const { ownKeys } = Reflect;
const { push: arrayPush, filter: arrayFilter, slice: arraySlice, map: arrayMap } = Array.prototype;
const { parse: jsonParse, stringify: jsonStringify } = JSON;
const { slice: stringSlice, indexOf: stringIndexOf } = String.prototype;
const { then: promiseThen } = Promise.prototype;
const { get: mapGet, set: mapSet, has: mapHas, delete: mapDelete } = Map.prototype;
const { call: functionCall, apply: functionApply, bind: functionBind } = Function.prototype;
const { keys: objectKeys, entries: objectEntries, defineProperty: objectDefineProperty, hasOwn: objectHasOwn } = Object;
const { isArray } = Array;

const TypedArray = getPrototypeOf(Uint8Array) as object;
/** The objects compared in full, by the name a message gives them. */
const TARGETS: ReadonlyArray<readonly [string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
  ['Number.prototype', Number.prototype],
  ['Boolean.prototype', Boolean.prototype],
  ['Symbol.prototype', Symbol.prototype],
  ['Promise.prototype', Promise.prototype],
  ['Map.prototype', Map.prototype],
  ['Set.prototype', Set.prototype],
  ['WeakMap.prototype', WeakMap.prototype],
  ['Error.prototype', Error.prototype],
  ['RegExp.prototype', RegExp.prototype],
  ['Date.prototype', Date.prototype],
  ['ArrayBuffer.prototype', ArrayBuffer.prototype],
  ['Uint8Array.prototype', Uint8Array.prototype],
  ['MessagePort.prototype', MessagePort.prototype],
  ['TypedArray.prototype', (TypedArray as { prototype: object }).prototype],
  ['Object', Object],
  ['Array', Array],
  ['Promise', Promise],
  ['String', String],
  ['Number', Number],
  ['JSON', JSON],
  ['Reflect', Reflect],
  ['Math', Math],
];
/** Globals compared by identity only: a tool may add globals of its own, never replace these. */
const GLOBALS = [
  'Object',
  'Array',
  'Function',
  'String',
  'Number',
  'Boolean',
  'Symbol',
  'Promise',
  'Map',
  'Set',
  'WeakMap',
  'Error',
  'TypeError',
  'RegExp',
  'Date',
  'JSON',
  'Reflect',
  'Math',
  'Proxy',
  'ArrayBuffer',
  'Uint8Array',
  'Buffer',
  'AbortController',
  'AbortSignal',
  'DOMException',
  'TextEncoder',
  'TextDecoder',
  'queueMicrotask',
  'setTimeout',
  'clearTimeout',
  'setImmediate',
  'structuredClone',
];

/** The few the call path uses most, checked around every call: reading them costs almost nothing. */
const CRITICAL: ReadonlyArray<readonly [string, object, string, unknown]> = [
  ['Array.prototype', Array.prototype, 'push', arrayPush],
  ['Array.prototype', Array.prototype, 'filter', arrayFilter],
  ['Array.prototype', Array.prototype, 'slice', arraySlice],
  ['Array.prototype', Array.prototype, 'map', arrayMap],
  ['JSON', JSON, 'parse', jsonParse],
  ['JSON', JSON, 'stringify', jsonStringify],
  ['String.prototype', String.prototype, 'slice', stringSlice],
  ['String.prototype', String.prototype, 'indexOf', stringIndexOf],
  ['Promise.prototype', Promise.prototype, 'then', promiseThen],
  ['Map.prototype', Map.prototype, 'get', mapGet],
  ['Map.prototype', Map.prototype, 'set', mapSet],
  ['Map.prototype', Map.prototype, 'has', mapHas],
  ['Map.prototype', Map.prototype, 'delete', mapDelete],
  ['Function.prototype', Function.prototype, 'call', functionCall],
  ['Function.prototype', Function.prototype, 'apply', functionApply],
  ['Function.prototype', Function.prototype, 'bind', functionBind],
  ['Object', Object, 'keys', objectKeys],
  ['Object', Object, 'entries', objectEntries],
  ['Object', Object, 'defineProperty', objectDefineProperty],
  ['Object', Object, 'hasOwn', objectHasOwn],
  ['Array', Array, 'isArray', isArray],
];

interface Snapshot {
  readonly name: string;
  readonly target: object;
  readonly parent: object | null;
  readonly extensible: boolean;
  readonly keys: number;
  readonly properties: ReadonlyArray<readonly [PropertyKey, PropertyDescriptor]>;
}

function describeKey(key: PropertyKey): string {
  return typeof key === 'symbol' ? `[${String(key.description)}]` : `"${key}"`;
}

function same(a: PropertyDescriptor, b: PropertyDescriptor | undefined): boolean {
  return (
    b !== undefined &&
    is(a.value, b.value) &&
    a.get === b.get &&
    a.set === b.set &&
    a.writable === b.writable &&
    a.enumerable === b.enumerable &&
    a.configurable === b.configurable
  );
}

/**
 * Around every call, cheaply, against the built-ins as they were before the package loaded: an
 * enumerable property inherited by every object or array (it breaks argument checks, which read an
 * object's keys), and the built-ins the call path uses most.
 */
export function probeIntrinsics(): string | undefined {
  for (const key in {}) return `Object.prototype gained the enumerable property "${key}"`;
  for (const key in []) return `Array.prototype gained the enumerable property "${key}"`;
  for (let i = 0; i < CRITICAL.length; i++) {
    const [name, target, key, original] = CRITICAL[i]!;
    // A plain read: a getter put in place of one is found by the full comparison (compare()).
    if ((target as Record<string, unknown>)[key] !== original) return `${name}.${key} was replaced`;
  }
  return undefined;
}

/** The built-ins as they are now: taken once the package has loaded, compared after calls. */
export class Intrinsics {
  readonly #snapshots: Snapshot[] = [];
  readonly #globals: Array<readonly [string, unknown]> = [];

  constructor() {
    for (const [name, target] of TARGETS) {
      const keys = ownKeys(target);
      const properties: Array<readonly [PropertyKey, PropertyDescriptor]> = [];
      for (let i = 0; i < keys.length; i++) properties[i] = [keys[i]!, getOwnPropertyDescriptor(target, keys[i]!)!];
      this.#snapshots[this.#snapshots.length] = {
        name,
        target,
        parent: getPrototypeOf(target) as object | null,
        extensible: isExtensible(target),
        keys: keys.length,
        properties,
      };
    }
    for (const name of GLOBALS)
      this.#globals[this.#globals.length] = [name, (globalThis as Record<string, unknown>)[name]];
  }

  /** Every property of every built-in compared with the snapshot: what changed first, or undefined. */
  compare(): string | undefined {
    const probed = probeIntrinsics();
    if (probed !== undefined) return probed;
    for (let i = 0; i < this.#snapshots.length; i++) {
      const { name, target, parent, extensible, keys, properties } = this.#snapshots[i]!;
      if (getPrototypeOf(target) !== parent) return `the prototype of ${name} was changed`;
      if (isExtensible(target) !== extensible) return `${name} was made non-extensible`;
      for (let j = 0; j < properties.length; j++) {
        const [key, descriptor] = properties[j]!;
        const now = getOwnPropertyDescriptor(target, key);
        if (now === undefined) return `${name} lost ${describeKey(key)}`;
        if (!same(descriptor, now)) return `${name}[${describeKey(key)}] was replaced or redefined`;
      }
      const count = ownKeys(target).length;
      if (count !== keys) {
        const known = new Set(properties.map(([key]) => key));
        const added = ownKeys(target).find((key) => !known.has(key));
        return `${name} gained ${added === undefined ? 'properties' : describeKey(added)}`;
      }
    }
    for (let i = 0; i < this.#globals.length; i++) {
      const [name, value] = this.#globals[i]!;
      if ((globalThis as Record<string, unknown>)[name] !== value) return `globalThis.${name} was replaced`;
    }
    return undefined;
  }
}
