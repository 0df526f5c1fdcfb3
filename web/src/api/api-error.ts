/** A non-2xx answer, carrying the contract's error body (§2). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }

  /** The 422 reasons of a firmware rejection, when present. */
  get reasons(): string[] {
    const reasons = this.body.reasons
    return Array.isArray(reasons) ? reasons.map(String) : []
  }
}
