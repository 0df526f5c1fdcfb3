/** Seconds since epoch, fractional (the gateway's timestamps, contract §2). */
export const nowSeconds = () => Date.now() / 1000

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Settles like `promise`, or rejects with `message` if it has not settled within `ms`; the timer never outlives it. */
export function withTimeout<T>(promise: Promise<T>, ms: number, message = `no answer within ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}
