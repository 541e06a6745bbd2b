// Values made once per owner object and key. The owner is a resolved model,
// which nothing changes once made: what depends only on the model (not on the
// node a file or script is for) is rendered once per plan instead of once per
// node. A WeakMap: the values go when the model does.

const made = new WeakMap<object, Map<string, unknown>>();

/** `make()`'s value for `owner` and `key`, made at the first call and returned as is after. */
export function oncePer<T>(owner: object, key: string, make: () => T): T {
  let values = made.get(owner);
  if (values === undefined) made.set(owner, (values = new Map()));
  if (values.has(key)) return values.get(key) as T;
  const value = make();
  values.set(key, value);
  return value;
}
