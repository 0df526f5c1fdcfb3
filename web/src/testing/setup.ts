import { cleanup, configure } from '@testing-library/react'
import { afterEach } from 'vitest'

// findBy…/waitFor give up after this long: 1 s (the default) is too little on a CI machine busy
// with the server suite, and a test that passes waits no longer for it.
configure({ asyncUtilTimeout: 5000 })

afterEach(() => cleanup())
