/** Bindings removed: one user's binding of a device, or all of a device's (`username` absent); `all` when some removals may have been missed. */
export type BindingRemoval = { device_id: string; username?: string } | { all: true }

/** What keeps binding checks in memory (the gateway's binding cache). */
export interface BindingWatcher {
  remove(removal: BindingRemoval): void
  /** False while removals made elsewhere may go unheard (the bus is disconnected). */
  setEnabled(enabled: boolean): void
}

/**
 * The channel that keeps every instance's binding cache honest: a removal announced on one
 * instance reaches the watchers of all. Picked with the device bus (`create-device-bus.ts`),
 * whose connection it shares.
 */
export interface BindingRemovals {
  /** Tells every instance's watchers that bindings were removed; this instance's hear it before this returns. */
  announce(removal: BindingRemoval): void
  /** `watcher` hears every removal announced on any instance. */
  watch(watcher: BindingWatcher): void
  close(): Promise<void>
}
