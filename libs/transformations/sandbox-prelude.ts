/**
 * Script evaluated in each sandbox context before the transformation's code is compiled.
 *
 * It evaluates to the harness that runs one call: the code's factory is called afresh each time, so
 * its top-level bindings start over, and the request comes in and the result goes out as JSON text.
 * Then every object reachable from the global object, and the intrinsics that are not (iterator,
 * generator and typed-array prototypes), is frozen: a call cannot leave state in a built-in or a
 * global for the next one. A few prototype properties that ordinary code assigns on its own objects
 * (`error.name = ...`, `obj.toString = ...`) become accessors that define the property on the object
 * instead, so freezing does not break them (the "override mistake"). Buffers and typed arrays are
 * removed: QuickJS allocates their memory outside the runtime's limit.
 */
export const SANDBOX_PRELUDE = String.raw`
(function () {
  const overridable = (proto, key) => {
    const found = Object.getOwnPropertyDescriptor(proto, key);
    if (!found || !('value' in found)) return;
    const value = found.value;
    Object.defineProperty(proto, key, {
      get() { return value; },
      set(next) {
        if (this === proto) throw new TypeError('Cannot assign to read only property ' + String(key));
        Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
      },
      enumerable: found.enumerable,
      configurable: false,
    });
  };
  // Buffers are allocated outside the runtime's memory limit: a transformation works on JSON without them.
  for (const name of ['ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Atomics', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'WebAssembly']) {
    delete globalThis[name];
  }
  for (const key of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'toLocaleString']) overridable(Object.prototype, key);
  for (const ErrorType of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError]) {
    for (const key of ['name', 'message', 'constructor', 'toString']) overridable(ErrorType.prototype, key);
  }
  overridable(Function.prototype, 'toString');

  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const harness = function (factory, input) {
    const call = parse(input);
    const transform = factory();
    if (typeof transform !== 'function') throw new TypeError('The code defines no function transform');
    const result = transform(call.request, call.context);
    return result === null ? 'null' : stringify(result);
  };

  const seen = new Set();
  const freeze = (value) => {
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) return;
    seen.add(value);
    Object.freeze(value);
    freeze(Object.getPrototypeOf(value));
    for (const key of Reflect.ownKeys(value)) {
      const property = Object.getOwnPropertyDescriptor(value, key);
      if ('value' in property) freeze(property.value);
      else { freeze(property.get); freeze(property.set); }
    }
  };
  const hidden = [
    function* () {}, async function () {}, async function* () {}, (function* () {})(), (async function* () {})(),
    [][Symbol.iterator](), new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), ''[Symbol.iterator](),
    /a/[Symbol.matchAll](''), Promise.resolve(),
  ];
  return { harness, freeze: (factory) => { freeze(globalThis); hidden.forEach(freeze); freeze(harness); freeze(factory); } };
})()
`;
