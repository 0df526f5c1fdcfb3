export { buildApp, type BuildOptions } from './app.js'
export { loadConfig, type Config } from './config/config.js'
export { openStorage, type Storage } from './storage/storage.js'
export { serve } from './server.js'
