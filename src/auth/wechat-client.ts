import { AppError } from '../errors.js'

const INVALID_CODE_ERRCODES = new Set([40029, 40163, 40226])

export interface WechatSettings {
  appid: string
  secret: string
  apiBase: string
}

/** Exchanges a mini-program login code for an openid. The session_key is dropped here. */
export async function exchangeWechatCode(settings: WechatSettings, code: string, timeoutMs: number): Promise<{ openid: string }> {
  const url = new URL(`${settings.apiBase}/sns/jscode2session`)
  url.search = new URLSearchParams({
    appid: settings.appid,
    secret: settings.secret,
    js_code: code,
    grant_type: 'authorization_code',
  }).toString()
  let body: unknown
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
    body = JSON.parse(await res.text())
  } catch {
    throw new AppError('upstream_unavailable', 'Mini-program login service unavailable')
  }
  if (typeof body !== 'object' || body === null) throw new AppError('upstream_unavailable', 'Mini-program login service answered badly')
  const { errcode, openid } = body as { errcode?: unknown; openid?: unknown }
  if (typeof errcode === 'number' && errcode !== 0) {
    if (INVALID_CODE_ERRCODES.has(errcode)) throw new AppError('unauthorized', 'Login credential invalid or already used')
    throw new AppError('upstream_unavailable', `Mini-program login service error ${errcode}`)
  }
  if (typeof openid !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(openid)) {
    throw new AppError('upstream_unavailable', 'Mini-program login service answered without an openid')
  }
  return { openid }
}
