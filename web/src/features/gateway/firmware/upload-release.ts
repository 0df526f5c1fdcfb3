import { apiErrorOf } from '../../../api/api'
import { ApiError } from '../../../api/api-error'
import type { Answer } from '../../../api/types'
import { sessionStore } from '../../../session/session'
import { RELEASES_PATH } from './get-releases'

export type UploadAnswer = Answer<'/api/v1/admin/firmware/slave/releases', 'post'>

/** Bytes of the request body sent so far, of `total`. */
export interface UploadProgress {
  loaded: number
  total: number
}

/**
 * POST releases (multipart) over XMLHttpRequest, the one browser API that reports upload
 * progress (fetch has none). Errors are the ApiError the typed client throws, so a 422 keeps its reasons.
 */
export function uploadRelease(form: FormData, onProgress: (p: UploadProgress) => void): Promise<UploadAnswer> {
  const token = sessionStore.getSnapshot()?.token
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', RELEASES_PATH)
    xhr.setRequestHeader('accept', 'application/json')
    if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`)
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress({ loaded: e.loaded, total: e.total })
    })
    xhr.addEventListener('error', () => reject(new ApiError(0, 'network_error', 'The upload failed: no answer from the server.')))
    xhr.addEventListener('load', () => {
      let body: unknown = xhr.responseText
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : {}
      } catch {
        // Not JSON: kept as text, which apiErrorOf shows as the message.
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as UploadAnswer)
      else reject(apiErrorOf(new Response(null, { status: xhr.status, statusText: xhr.statusText }), body, token, RELEASES_PATH))
    })
    xhr.send(form)
  })
}
