const LOW_FIRST = 36 ** 4
const LOW_END = 36 ** 5

/**
 * Ids of the requests sent on one link: 11 base-36 digits, increasing. V8's JSON.parse interns
 * string values of up to 10 characters, so shorter unique ids would each enter the string table
 * on both ends of the link. Built from two small integers (6 + 5 digits): a number above 2^31
 * prints in another base through a floating-point loop, ~6 times slower.
 */
export class RequestIds {
  private high = 36 ** 5
  private low: number

  /** `issued`: how many ids to skip (tests start near a carry). */
  constructor(issued = 0) {
    this.low = LOW_FIRST - 1 + (issued % (LOW_END - LOW_FIRST))
    this.high += Math.floor(issued / (LOW_END - LOW_FIRST))
  }

  next(): string {
    if (++this.low === LOW_END) {
      this.low = LOW_FIRST
      this.high++
    }
    return this.high.toString(36) + this.low.toString(36)
  }
}
