import { AppError } from '../../errors.js'
import type { DatabaseClock } from '../../storage/database-clock.js'
import type { Dialect } from '../../storage/storage.js'
import type { DevicesCondition } from './selector/selector-sql.js'
import { parseSelector } from './selector/parse-selector.js'
import { selectorCondition } from './selector/selector-sql.js'
import { SelectorError } from './selector/selector-syntax.js'

/** Selector text as a request gives it → the SQL condition on `devices` (or 400 `invalid_selector` with the position). */
export class SelectorConditions {
  constructor(
    private readonly storage: { dialect: Dialect; clock: Pick<DatabaseClock, 'shifted'> },
    private readonly aliveSeconds: number,
  ) {}

  condition(text: string): DevicesCondition {
    let selector
    try {
      selector = parseSelector(text)
    } catch (err) {
      if (err instanceof SelectorError) throw new AppError('invalid_selector', err.message, { position: err.position })
      throw err
    }
    // `@online` compares stored times with the database's clock, as every instance would.
    return selectorCondition(selector, { dialect: this.storage.dialect, aliveSince: this.storage.clock.shifted(-this.aliveSeconds) })
  }
}
