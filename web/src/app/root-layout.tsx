import { Outlet } from 'react-router'
import { DocumentTitle } from './page-title'

/** Above every route: the document's title follows the page. */
export function RootLayout() {
  return (
    <>
      <DocumentTitle />
      <Outlet />
    </>
  )
}
