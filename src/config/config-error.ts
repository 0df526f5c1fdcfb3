/** Invalid configuration: the start stops with one line naming the variable, exit code 1. */
export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`)
    this.name = 'ConfigError'
  }
}
