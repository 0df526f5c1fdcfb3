import { Route, Routes } from 'react-router'
import { DevicePage } from './device/device-page'
import { DevicesPage } from './devices/devices-page'
import { OperationLogPage } from './logs/operation-log-page'
import './platform.css'
import { SummaryPage } from './summary/summary-page'

/** /platform, /platform/devices, /platform/devices/:id, /platform/logs (contract §12); this whole module loads lazily. */
export function PlatformRoutes() {
  return (
    <Routes>
      <Route index element={<SummaryPage />} />
      <Route path="devices" element={<DevicesPage />} />
      <Route path="devices/:id" element={<DevicePage />} />
      <Route path="logs" element={<OperationLogPage />} />
      <Route path="*" element={<SummaryPage />} />
    </Routes>
  )
}
