import DataLoader from 'dataloader';

/**
 * A request-scoped DataLoader, defined once beside the data it loads: its name (for debugging)
 * and how to build its batch function from what it needs (services, the viewer). The
 * definition itself is the loader's key, so two resolvers that load the same thing share one
 * loader and its type.
 */
export interface LoaderDefinition<K, V, D> {
  readonly name: string;
  readonly batch: (deps: D) => (keys: readonly K[]) => Promise<V[]>;
}

export function defineLoader<K, V, D>(
  name: string,
  batch: (deps: D) => (keys: readonly K[]) => Promise<V[]>,
): LoaderDefinition<K, V, D> {
  return { name, batch };
}

/**
 * DataLoaders scoped to one request (or one subscription event), created on first use by the
 * resolver that needs them, so relation fields batch their queries without a central registry.
 */
export class Loaders {
  private readonly loaders = new Map<object, DataLoader<unknown, unknown>>();

  /** The request's loader of this definition; `deps` builds it the first time only. */
  get<K, V, D>(definition: LoaderDefinition<K, V, D>, deps: D): DataLoader<K, V> {
    let loader = this.loaders.get(definition) as DataLoader<K, V> | undefined;
    if (!loader) {
      loader = new DataLoader<K, V>(definition.batch(deps));
      this.loaders.set(definition, loader as DataLoader<unknown, unknown>);
    }
    return loader;
  }
}

/** Groups rows under each key, in key order, for a one-to-many loader. */
export function groupByKey<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): V[][] {
  const groups = new Map<K, V[]>(keys.map((k) => [k, []]));
  for (const row of rows) groups.get(keyOf(row))?.push(row);
  return keys.map((k) => groups.get(k) ?? []);
}

/** Picks the row for each key (or null), for a one-to-one loader. */
export function byKey<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): (V | null)[] {
  const map = new Map(rows.map((r) => [keyOf(r), r]));
  return keys.map((k) => map.get(k) ?? null);
}
