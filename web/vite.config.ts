import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// Built into dist/console, which the server serves (src/console/console-routes.ts).
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 500,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080', '/v1': 'http://127.0.0.1:8080' },
  },
})
