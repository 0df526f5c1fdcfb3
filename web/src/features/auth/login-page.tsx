import { useMutation } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Navigate, useLocation } from 'react-router'
import { api, ok } from '../../api/api'
import { Alert } from '../../components/ui/alert'
import { LanguageSelect } from '../../components/layout/language-select'
import { sessionStore, useSession } from '../../session/session'

export function LoginPage() {
  const { t } = useTranslation()
  const session = useSession()
  const location = useLocation()
  const login = useMutation({
    mutationFn: (body: { username: string; password: string }) => ok(api.POST('/api/v1/auth/login', { body })),
    onSuccess: (answer) => sessionStore.signIn(answer),
  })
  if (session) {
    const from = (location.state as { from?: string } | null)?.from
    return <Navigate to={from && from !== '/login' ? from : '/machines'} replace />
  }
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    login.mutate({ username: String(form.get('username')), password: String(form.get('password')) })
  }
  return (
    <main className="login">
      <h1>{t('login.title')}</h1>
      <form onSubmit={submit}>
        <label>
          {t('login.username')}
          <input name="username" autoComplete="username" required autoFocus />
        </label>
        <label>
          {t('login.password')}
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {login.error ? <Alert>{login.error.message}</Alert> : null}
        <button type="submit" disabled={login.isPending}>
          {t('login.signIn')}
        </button>
      </form>
      <LanguageSelect />
    </main>
  )
}
