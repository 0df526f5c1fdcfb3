import react from '@vitejs/plugin-react'
import { defineConfig } from 'vitest/config'

// Component tests of the console (logic that runs in the browser), in happy-dom.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  test: {
    name: 'console',
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'happy-dom',
    setupFiles: ['./src/testing/setup.ts'],
  },
})
