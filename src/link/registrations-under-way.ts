/**
 * The registrations of each device id under way on this instance, and the highest fencing
 * generation seen for it meanwhile (a claim announced on the bus, read from the database, or its
 * own). A registration that saw a higher generation than its own lost to a newer connection.
 */
export class RegistrationsUnderWay {
  private readonly count = new Map<string, number>()
  private readonly highest = new Map<string, number>()

  begin(deviceId: string): void {
    this.count.set(deviceId, (this.count.get(deviceId) ?? 0) + 1)
  }

  /** One registration of the device ended; what was seen for it is forgotten with the last. */
  end(deviceId: string): void {
    const left = (this.count.get(deviceId) ?? 1) - 1
    if (left > 0) return void this.count.set(deviceId, left)
    this.count.delete(deviceId)
    this.highest.delete(deviceId)
  }

  has(deviceId: string): boolean {
    return this.count.has(deviceId)
  }

  /** A generation of the device was seen: remembered while one of its registrations is under way. */
  saw(deviceId: string, generation: number): void {
    if (!this.count.has(deviceId)) return
    if (generation > (this.highest.get(deviceId) ?? 0)) this.highest.set(deviceId, generation)
  }

  /** Whether a generation above `generation` was seen for the device since its registrations began. */
  passed(deviceId: string, generation: number): boolean {
    return (this.highest.get(deviceId) ?? 0) > generation
  }
}
