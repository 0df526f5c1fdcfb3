import type { BindingRemoval, BindingRemovals, BindingWatcher } from './binding-removals.js'

/** One instance: an announced removal reaches this process's watchers at once. */
export class InProcessBindingRemovals implements BindingRemovals {
  private readonly watchers: BindingWatcher[] = []

  announce(removal: BindingRemoval): void {
    for (const watcher of this.watchers) watcher.remove(removal)
  }

  watch(watcher: BindingWatcher): void {
    this.watchers.push(watcher)
  }

  /** Every watcher of this process: the NATS channel tells them when it cannot hear other instances. */
  setWatchersEnabled(enabled: boolean): void {
    for (const watcher of this.watchers) watcher.setEnabled(enabled)
  }

  async close(): Promise<void> {}
}
