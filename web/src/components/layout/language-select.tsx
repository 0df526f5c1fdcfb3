import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { LANGUAGES, changeLanguage, type Language } from '../../i18n/i18n'

export function LanguageSelect() {
  const { t, i18n } = useTranslation()
  const id = useId()
  return (
    <span className="language">
      <label htmlFor={id}>{t('nav.language')}</label>
      <select id={id} value={i18n.language} onChange={(e) => changeLanguage(e.target.value as Language)}>
        {LANGUAGES.map((l) => (
          <option key={l.code} value={l.code} lang={l.code}>
            {l.label}
          </option>
        ))}
      </select>
    </span>
  )
}
