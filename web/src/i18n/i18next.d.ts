import 'i18next'
import type en from './locales/en.json'

// A key missing from the English file fails to compile.
declare module 'i18next' {
  interface CustomTypeOptions {
    resources: { translation: typeof en }
  }
}
