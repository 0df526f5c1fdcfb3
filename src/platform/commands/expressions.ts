/** Expressions a device face can show; the console picks one (meta.expressions). */
export const EXPRESSIONS = ['neutral', 'happy', 'sad', 'angry', 'surprised', 'sleepy', 'wink', 'love', 'thinking', 'confused'] as const
export type Expression = (typeof EXPRESSIONS)[number]
