import i18next, { type FormatterModule } from 'i18next'
import { initReactI18next } from 'react-i18next'
import en from './locales/en.json'
import zhCN from './locales/zh-CN.json'
import { formatInterpolated } from '../components/ui/format'

export const LANGUAGES = [
  { code: 'en', label: 'English' },
  { code: 'zh-CN', label: '简体中文' },
] as const
export type Language = (typeof LANGUAGES)[number]['code']

const STORAGE_KEY = 'fleetgate.language'

/** The remembered choice, else Chinese for a browser whose preferred language starts with `zh`. */
export function initialLanguage(stored: string | null, browserLanguages: readonly string[]): Language {
  if (stored && LANGUAGES.some((l) => l.code === stored)) return stored as Language
  const first = browserLanguages[0] ?? 'en'
  return first.toLowerCase().startsWith('zh') ? 'zh-CN' : 'en'
}

export const resources = { en: { translation: en }, 'zh-CN': { translation: zhCN } } as const

/** Numbers put into sentences are written in the browser's locale, not the console's language (§12). */
const browserLocaleNumbers: FormatterModule = {
  type: 'formatter',
  init: () => {},
  add: () => {},
  addCached: () => {},
  format: (value) => formatInterpolated(value) as string,
}

export function setupI18n(language: Language = initialLanguage(localStorage.getItem(STORAGE_KEY), navigator.languages ?? [navigator.language])) {
  void i18next.use(initReactI18next).use(browserLocaleNumbers).init({
    resources,
    lng: language,
    fallbackLng: 'en',
    interpolation: { escapeValue: false, alwaysFormat: true },
  })
  document.documentElement.lang = language
  return i18next
}

export function changeLanguage(language: Language): void {
  localStorage.setItem(STORAGE_KEY, language)
  document.documentElement.lang = language
  void i18next.changeLanguage(language)
}
