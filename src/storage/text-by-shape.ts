import { CompiledQuery } from 'kysely'

const MAX_CACHED_TEXTS = 256

/**
 * Statements whose text depends only on their shape (which parts a union has, how many values a
 * list): Kysely builds and compiles the text once per shape, later ones take it with their own
 * parameters. On the hot path of production ingest, building a read of every machine of a group
 * cost more than running it. The caller gives the parameters in the order the text takes them;
 * the first statement of each shape checks that (a mismatch throws there, never silently).
 */
export class TextByShape {
  private readonly texts = new Map<string, string>()

  compiled<R>(shape: string, parameters: readonly unknown[], compile: () => CompiledQuery<R>): CompiledQuery<R> {
    const text = this.texts.get(shape)
    if (text !== undefined) return CompiledQuery.raw(text, [...parameters]) as CompiledQuery<R>
    const compiled = compile()
    if (compiled.parameters.length !== parameters.length || compiled.parameters.some((p, i) => !Object.is(p, parameters[i]))) {
      throw new Error(`the statement's parameters are not those given for shape ${shape}: ${compiled.sql.slice(0, 200)}`)
    }
    if (this.texts.size >= MAX_CACHED_TEXTS) this.texts.clear()
    this.texts.set(shape, compiled.sql)
    return compiled
  }
}
