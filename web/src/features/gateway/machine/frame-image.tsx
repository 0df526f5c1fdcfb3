import { useTranslation } from 'react-i18next'
import { ForwardedAnswer, isPlainObject } from '../../../components/ui/forwarded-answer'
import { useNow } from '../../../components/ui/use-now'

/** A frame older than this is marked stale. */
export const STALE_AFTER_MS = 5_000

/**
 * The image in a machine's frame answer: the reference machine's `{content_type: "image/…",
 * encoding: "base64", data, width, height}`, or a `data:image/…` URL as a string.
 */
export function frameSource(answer: unknown): { src: string; width?: number; height?: number } | null {
  if (typeof answer === 'string') return answer.startsWith('data:image/') ? { src: answer } : null
  if (!isPlainObject(answer)) return null
  const { content_type: type, encoding, data, width, height } = answer
  if (typeof type !== 'string' || !type.startsWith('image/') || typeof data !== 'string') return null
  if (encoding !== undefined && encoding !== 'base64') return null
  return {
    src: `data:${type};base64,${data}`,
    width: typeof width === 'number' ? width : undefined,
    height: typeof height === 'number' ? height : undefined,
  }
}

/** When the frame was taken (epoch ms): its `captured_at` (seconds), else when it arrived. */
export function capturedAt(answer: unknown, receivedAt: number): number {
  const at = isPlainObject(answer) ? answer.captured_at : undefined
  return typeof at === 'number' ? at * 1000 : receivedAt
}

/** A frame answer as an image (marked when stale), or, in a shape the console does not know, as it came. */
export function FrameImage({ answer, receivedAt, alt }: { answer: unknown; receivedAt: number; alt: string }) {
  const { t } = useTranslation()
  const now = useNow()
  const source = frameSource(answer)
  if (!source) {
    return (
      <figure className="frame">
        <figcaption>{alt}</figcaption>
        <ForwardedAnswer value={answer} />
      </figure>
    )
  }
  const age = now - capturedAt(answer, receivedAt)
  return (
    <figure className="frame">
      <img src={source.src} alt={alt} width={source.width} height={source.height} />
      {age > STALE_AFTER_MS ? <figcaption className="stale">{t('machine.stale', { seconds: Math.round(age / 1000) })}</figcaption> : null}
    </figure>
  )
}
