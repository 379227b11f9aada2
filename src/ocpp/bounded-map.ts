/**
 * A Map that keeps only its `limit` most recently set keys: what a connection remembers per EVSE or per transaction
 * must stay small whatever ids a station makes up.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.limit) this.delete(this.keys().next().value as K);
    return this;
  }
}
